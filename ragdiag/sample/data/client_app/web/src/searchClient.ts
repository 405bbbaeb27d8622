// Backend-for-frontend: search calls made directly from the web tier.
import axios from "axios";

const SEARCH_ENDPOINT = process.env.MUSTER_SEARCH_ENDPOINT ?? "https://muster-search.search.windows.net";
const API_VERSION = "2025-09-01";
const SEARCH_URL = `${SEARCH_ENDPOINT}/indexes/muster/docs/search?api-version=${API_VERSION}`;

export interface SearchHit {
  id: string;
  title: string;
  content: string;
  "@search.rerankerScore"?: number;
}

function headers(): Record<string, string> {
  return { "Content-Type": "application/json", "api-key": process.env.MUSTER_SEARCH_KEY ?? "" };
}

export async function searchDocuments(query: string, userGroup: string): Promise<SearchHit[]> {
  const body = {
    search: query,
    queryType: "semantic",
    semanticConfiguration: "default",
    semanticQuery: query,
    top: 10,
    vectorQueries: [{ kind: "text", text: query, fields: "content_vector", k: 20 }],
    filter: `group_ids/any(g: g eq '${userGroup}')`,
  };
  const response = await fetch(SEARCH_URL, { method: "POST", headers: headers(), body: JSON.stringify(body) });
  if (!response.ok) {
    throw new Error(`search failed: ${response.status}`);
  }
  return (await response.json()).value as SearchHit[];
}

export async function suggestTitles(prefix: string): Promise<string[]> {
  const { data } = await axios.post(
    SEARCH_URL,
    { search: `${prefix}*`, queryType: "full", top: 5, select: "title" },
    { headers: headers() },
  );
  return data.value.map((hit: SearchHit) => hit.title);
}

export async function handleSearch(req: Request): Promise<Response> {
  const { query } = await req.json();
  const userGroup = req.headers.get("x-user-group") ?? "";
  return Response.json(await searchDocuments(query, userGroup));
}
