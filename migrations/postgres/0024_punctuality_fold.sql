-- #36: the punctuality rollups are folded by one statement (CompactRollups):
-- the fresh rows are deleted, summed per event and hour and per event and
-- day, and upserted, where the compactor read them back into the process,
-- read the rollup rows of their keys, merged in Go and wrote them again.
-- Each one-time event's delivery leaves a fresh row of its own, so that round
-- trip carried every delivery twice more.
--
-- A lateness histogram is text, "bucket:count,…" by bucket (the Go side's
-- encodeLateness). The fold joins the histograms of a key with commas and
-- normalizes the result only when it joined more than one: this function
-- adds the counts of equal buckets and orders them. A one-time event's hour
-- and day rows each have one histogram, so they never call it (a SQL
-- function call costs more than the row's insert). An instance of the
-- previous version folds in Go under the same advisory lock, so the two never
-- fold at once and agree on the result.
CREATE FUNCTION qhronos_lateness_norm(h text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT COALESCE(string_agg(k || ':' || n, ',' ORDER BY k), '')
    FROM (SELECT split_part(x, ':', 1)::bigint AS k, SUM(split_part(x, ':', 2)::bigint) AS n
          FROM unnest(string_to_array(h, ',')) AS x WHERE x <> '' GROUP BY 1) t
$$;
