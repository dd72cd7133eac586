/**
 * A quick look at the model endpoint at start-up (`GET <baseURL>/models`), so that a wrong API key
 * stops the bot with a clear message instead of failing every turn later. Anything else (no
 * /models route, the server still starting) is only reported: the first turn will say more.
 */
import { scrubSecrets } from "../observe/scrub.ts";
import { createHttpFetch } from "./http-fetch.ts";

/**
 * The model client's own way of fetching: it also takes a base URL with a user and password in it
 * (a proxy's basic auth), which the global fetch refuses.
 */
const fetchLikeTheClient = createHttpFetch();

export type EndpointCheck = { ok: true } | { ok: false; fatal: boolean; message: string };

export async function checkModelEndpoint(baseURL: string, apiKey: string | undefined, timeoutMs = 3000): Promise<EndpointCheck> {
  const url = `${baseURL.replace(/\/+$/, "")}/models`;
  try {
    const res = await fetchLikeTheClient(url, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel();
    // 401 means the key itself is wrong; a 403 on /models may only mean the key cannot list models.
    if (res.status === 401) {
      return {
        ok: false,
        fatal: true,
        message: `The model endpoint ${scrubSecrets(baseURL)} refused the API key (HTTP ${res.status}). Check OPENAI_API_KEY (and OPENAI_BASE_URL).`,
      };
    }
    return res.ok ? { ok: true } : { ok: false, fatal: false, message: `GET ${scrubSecrets(url)} answered HTTP ${res.status}` };
  } catch (err) {
    return { ok: false, fatal: false, message: `the model endpoint ${scrubSecrets(baseURL)} is not reachable yet: ${scrubSecrets((err as Error).message)}` };
  }
}
