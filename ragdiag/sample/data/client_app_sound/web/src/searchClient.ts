// Web client: talks to our API only; the API builds every search request.

export interface SearchHit {
  id: string;
  title: string;
  content: string;
}

export async function searchDocuments(question: string, token: string): Promise<SearchHit[]> {
  const response = await fetch("/api/templates/fact", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify({ question }),
  });
  if (!response.ok) {
    throw new Error(`search failed: ${response.status}`);
  }
  return (await response.json()).hits as SearchHit[];
}
