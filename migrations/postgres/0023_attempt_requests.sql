-- #38: each attempt keeps the request it sent (method, URL, headers, body up
-- to 64 KiB), secrets already redacted, as one JSON document; NULL when
-- recording was off (delivery.record_requests) or the attempt predates this
-- migration. A nullable column without a default changes only the catalog:
-- no table rewrite. Added on the partitioned parents, it reaches every
-- existing slice; new slices copy their parent (qhronos_create_slice: LIKE …)
-- and a split copies every stored column (qhronos_split_slice), so both keep it.
ALTER TABLE attempts ADD COLUMN request_json text;
ALTER TABLE attempts_archive ADD COLUMN request_json text;
