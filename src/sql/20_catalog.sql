-- Part 20: the catalog plane (issue 4).  The durable catalog tables, the
-- views over them and their privileges.  Functions, triggers and the catalog
-- implications follow in 20_catalog_functions.sql.
--
-- The catalog is the authority: what exists (mzcoord.items), what each item
-- reads (mzcoord.item_inputs) and the collections that hold each item's
-- history (mzcoord.collections).  mzcoord.items is the only table whose
-- changes have implications; the other tables are derived from it by the
-- implication trigger, in the same statement.  Everybody may read the
-- catalog; only the extension's own code (running as the extension owner)
-- and superusers may change it.

-- User ids "u<N>" of items and collections (global ids) come from one
-- durable counter.  Gaps are allowed (a rolled back creation consumes a
-- value); a value is never handed out twice.
CREATE SEQUENCE mzcoord.id_seq AS bigint MINVALUE 1 NO CYCLE;

-- Numbers the catalog changes (batches) in mzcoord.implication_log.
CREATE SEQUENCE mzcoord.implication_batch_seq AS bigint MINVALUE 1 NO CYCLE;

CREATE TABLE mzcoord.items (
    id             text NOT NULL DEFAULT ('u' || nextval('mzcoord.id_seq')),
    kind           text NOT NULL,
    schema_name    name NOT NULL,
    name           name NOT NULL,
    relation       regclass,
    owner          regrole NOT NULL,
    retain_history interval,
    refresh        text[],
    definition     text,
    on_item        text,
    index_keys     text[],
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT items_pkey PRIMARY KEY (id),
    CONSTRAINT items_relation_key UNIQUE (relation),
    CONSTRAINT items_name_key UNIQUE (schema_name, name),
    CONSTRAINT items_on_item_fkey FOREIGN KEY (on_item)
        REFERENCES mzcoord.items (id) DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT items_id_check CHECK (id ~ '^u[1-9][0-9]*$'),
    CONSTRAINT items_kind_check
        CHECK (kind IN ('table', 'source', 'materialized_view', 'index', 'sink')),
    CONSTRAINT items_definition_check
        CHECK ((definition IS NOT NULL) = (kind IN ('source', 'materialized_view'))),
    CONSTRAINT items_refresh_check
        CHECK (refresh IS NULL OR kind = 'materialized_view'),
    CONSTRAINT items_on_item_check
        CHECK ((on_item IS NOT NULL) = (kind IN ('index', 'sink'))),
    CONSTRAINT items_index_keys_check
        CHECK ((index_keys IS NOT NULL) = (kind = 'index')),
    CONSTRAINT items_retain_history_check
        CHECK (retain_history IS NULL OR kind <> 'sink')
);

COMMENT ON TABLE mzcoord.items IS
'Catalog items (tables, sources, materialized views, indexes, sinks); changes to this table have implications';
COMMENT ON COLUMN mzcoord.items.id IS 'Item id, u<N>';
COMMENT ON COLUMN mzcoord.items.kind IS 'table, source, materialized_view, index or sink';
COMMENT ON COLUMN mzcoord.items.schema_name IS 'Schema of the item''s relation';
COMMENT ON COLUMN mzcoord.items.name IS 'Name of the item''s relation';
COMMENT ON COLUMN mzcoord.items.relation IS
'The item''s relation; for a table given at registration, for the other kinds created by the implication (NULL only until then)';
COMMENT ON COLUMN mzcoord.items.owner IS 'Owner of the item (the owner of its relation)';
COMMENT ON COLUMN mzcoord.items.retain_history IS
'Retain history window of the item''s collections; NULL means the default of 1 second';
COMMENT ON COLUMN mzcoord.items.refresh IS
'Refresh schedule of a materialized view (canonical clauses); NULL means continual maintenance';
COMMENT ON COLUMN mzcoord.items.definition IS
'Source: its column definitions; materialized view: its query, schema-qualified';
COMMENT ON COLUMN mzcoord.items.on_item IS 'Index: the indexed item; sink: the exported item';
COMMENT ON COLUMN mzcoord.items.index_keys IS 'Index: its key columns';

CREATE TABLE mzcoord.collections (
    global_id  text NOT NULL,
    item_id    text NOT NULL,
    version    integer NOT NULL DEFAULT 0,
    primary_id text,
    as_of      bigint NOT NULL,
    since      bigint,
    upper      bigint,
    CONSTRAINT collections_pkey PRIMARY KEY (global_id),
    CONSTRAINT collections_item_version_key UNIQUE (item_id, version),
    CONSTRAINT collections_item_id_fkey FOREIGN KEY (item_id)
        REFERENCES mzcoord.items (id) DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT collections_primary_id_fkey FOREIGN KEY (primary_id)
        REFERENCES mzcoord.collections (global_id) DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT collections_global_id_check CHECK (global_id ~ '^u[1-9][0-9]*$'),
    CONSTRAINT collections_version_check CHECK (version >= 0),
    CONSTRAINT collections_as_of_check CHECK (as_of >= 0),
    CONSTRAINT collections_since_check CHECK (since >= 0),
    CONSTRAINT collections_upper_check CHECK (upper >= 0)
);

COMMENT ON TABLE mzcoord.collections IS
'Collections (versions) of the catalog items with their durable frontiers; derived from mzcoord.items';
COMMENT ON COLUMN mzcoord.collections.primary_id IS
'NULL for the primary (current) version of an item; for an alias, the global id of its primary';
COMMENT ON COLUMN mzcoord.collections.as_of IS
'The since chosen when the collection was created (registration time, creation time or as-of)';
-- The comments on since and upper are in part 83 (their meaning changed in
-- catalog 0.6).

CREATE TABLE mzcoord.item_inputs (
    item_id         text NOT NULL,
    input_global_id text NOT NULL,
    input_item_id   text NOT NULL,
    CONSTRAINT item_inputs_pkey PRIMARY KEY (item_id, input_global_id),
    CONSTRAINT item_inputs_item_id_fkey FOREIGN KEY (item_id)
        REFERENCES mzcoord.items (id) DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT item_inputs_input_global_id_fkey FOREIGN KEY (input_global_id)
        REFERENCES mzcoord.collections (global_id) DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT item_inputs_input_item_id_fkey FOREIGN KEY (input_item_id)
        REFERENCES mzcoord.items (id) DEFERRABLE INITIALLY DEFERRED
);

CREATE INDEX item_inputs_input_global_id_idx
    ON mzcoord.item_inputs (input_global_id);
CREATE INDEX item_inputs_input_item_id_idx
    ON mzcoord.item_inputs (input_item_id);

COMMENT ON TABLE mzcoord.item_inputs IS
'Collections each item reads: the logical inputs of a materialized view, the indexed item of an index, the exported item of a sink';

CREATE TABLE mzcoord.implication_log (
    seq       bigint GENERATED ALWAYS AS IDENTITY,
    batch     bigint NOT NULL,
    xid       xid8 NOT NULL DEFAULT pg_current_xact_id(),
    logged_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    item_id   text NOT NULL,
    action    text NOT NULL,
    detail    jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT implication_log_pkey PRIMARY KEY (seq)
);

CREATE INDEX implication_log_item_id_idx ON mzcoord.implication_log (item_id);

COMMENT ON TABLE mzcoord.implication_log IS
'Append-only log of every catalog implication, in the order applied';

CREATE VIEW mzcoord.logical_inputs AS
SELECT ii.item_id,
       i.relation AS item,
       i.kind,
       ii.input_global_id,
       ii.input_item_id,
       ip.relation AS input,
       ip.kind AS input_kind
  FROM mzcoord.item_inputs ii
  JOIN mzcoord.items i ON i.id = ii.item_id
  JOIN mzcoord.items ip ON ip.id = ii.input_item_id;

COMMENT ON VIEW mzcoord.logical_inputs IS
'What each item reads, with relations and kinds';

REVOKE ALL ON TABLE mzcoord.items, mzcoord.collections, mzcoord.item_inputs,
    mzcoord.implication_log, mzcoord.logical_inputs FROM PUBLIC;
GRANT SELECT ON TABLE mzcoord.items, mzcoord.collections, mzcoord.item_inputs,
    mzcoord.implication_log, mzcoord.logical_inputs TO PUBLIC;
REVOKE ALL ON SEQUENCE mzcoord.id_seq, mzcoord.implication_batch_seq FROM PUBLIC;
