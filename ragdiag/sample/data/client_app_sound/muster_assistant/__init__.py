"""Muster AG knowledge assistant: chat over the internal document index "muster"."""
