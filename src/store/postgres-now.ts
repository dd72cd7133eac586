/** The database's clock in epoch milliseconds, as the PostgreSQL statements compare times (leases, expiry). */
export const NOW = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
