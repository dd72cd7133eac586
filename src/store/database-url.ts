/**
 * A PostgreSQL connection URL (`DATABASE_URL`) as it may be shown to a person: host, port,
 * user and database, never the password. Everything the PostgreSQL store says about its database
 * goes through here, so that no error message or log line carries the password.
 */

/** What a database URL may show: its redacted form and the secrets to keep out of any text. */
export interface DatabaseUrlInfo {
  /** `postgres://user@host:port/database`, without the password. */
  display: string;
  /** Strings that must never appear in a message (the password, raw and percent-encoded). */
  secrets: string[];
}

/** Thrown for a DATABASE_URL that cannot be read; the message never repeats the URL. */
export class DatabaseUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DatabaseUrlError";
  }
}

/** Reads a connection URL into its redacted form; throws DatabaseUrlError for a malformed one. */
export function describeDatabaseUrl(url: string): DatabaseUrlInfo {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // URL's own error carries the input, password and all: say what is wrong without it.
    throw new DatabaseUrlError(
      "DATABASE_URL is not a valid URL. Expected postgres://user:password@host:5432/database " +
        "(percent-encode special characters in the password).",
    );
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new DatabaseUrlError(
      `DATABASE_URL must start with postgres:// or postgresql:// (it starts with ${parsed.protocol}//).`,
    );
  }
  const secrets = new Set<string>();
  const addSecret = (value: string | null): void => {
    if (!value) return;
    secrets.add(value);
    secrets.add(encodeURIComponent(value));
    try {
      secrets.add(decodeURIComponent(value));
    } catch {
      // A password with a stray % is kept only as written.
    }
  };
  addSecret(parsed.password);
  addSecret(parsed.searchParams.get("password"));

  const user = parsed.username ? `${decodeSafely(parsed.username)}@` : "";
  // A socket path given as ?host=/run/postgresql is where the server really is.
  const host = parsed.searchParams.get("host") ?? parsed.host;
  const database = parsed.pathname.length > 1 ? parsed.pathname : "";
  return { display: `${parsed.protocol}//${user}${host}${database}`, secrets: [...secrets].filter((s) => s.length > 0) };
}

/** Replaces every secret in a text with `***`. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  // Longest first, so that a secret containing another is replaced whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(secret).join("***");
  return out;
}

function decodeSafely(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
