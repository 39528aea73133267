# Catalog upgrades 0.1 -> 0.2 (issue 11) -> 0.3 (issue 12) -> 0.4 (issue 19) -> 0.5 -> 0.6 (issue 20) -> 0.7 (issue 23) -> 0.8 -> 0.9 (issue 21), with the
# current library ($current below).
#
# Part 1, always: the current library installs the frozen 0.1 script (every C
# symbol it names exists), and against a 0.1 catalog the coordinator waits
# (one LOG line naming ALTER EXTENSION mzcoord UPDATE) while calls that need
# it fail at once with 55000; ALTER EXTENSION mzcoord UPDATE then starts it.
#
# Part 2, with the 0.1 library (MZCOORD_OLD_INSTALL, built by
# scripts/test.sh from the last 0.1 commit): a cluster runs a workload on
# the 0.1 library and catalog, is stopped, started with the current library
# and updated (through 0.2 to the current catalog): its materialized view,
# never computed before, then computes.  Nothing regresses, every recorded read answers the same, the
# backfill holds (bounds, requirements) and the checks pass.
#
# Part 1b: a 0.2 catalog, installed from the frozen 0.1 script and its
# update (PostgreSQL chains them: there is no 0.2 install script), updated.
# Part 1c: a 0.3 catalog (the same chain one step further), updated.
# Part 1d: a 0.4 catalog (the same chain one step further), updated.
# Part 1e: a 0.5 catalog (one step further again), updated.
# Part 1f: a 0.6 catalog (and once more), updated.
# Part 1g: a 0.7 catalog (and once more), updated.
# Part 1h: a 0.8 catalog, updated.  (Its histories' indexes change: part 2
# checks that on histories written under 0.1.)
#
# All parts compare the updated catalog with a fresh install in
# another database: relations, columns, constraints, indexes, triggers,
# views, functions, privileges, comments, event triggers and the rest of
# the extension's members.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

# The catalog version of this library (mzcoord.control's default_version).
my $current = '0.9';

my $conf = q{
shared_preload_libraries = 'mzcoord'
mzcoord.database = 'postgres'
mzcoord.tick_interval = 50
mzcoord.ready_timeout = 60000
};

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

# The histories whose indexes are not exactly the two of a 0.9 history (a
# btree on ts of the insertions, one of the retractions), one line each;
# empty when all are.
my $history_index_sql = q{
	SELECT string_agg(s.history::text, ' ' ORDER BY s.global_id)
	  FROM mzcoord.storage s
	 WHERE (SELECT string_agg(regexp_replace(pg_get_indexdef(i.indexrelid), 'history_u[0-9]+', 'H', 'g'),
	                          '; ' ORDER BY pg_get_indexdef(i.indexrelid))
	          FROM pg_index i WHERE i.indrelid = s.history)
	       IS DISTINCT FROM
	       'CREATE INDEX H_insertions ON mzcoord.H USING btree (ts) WHERE (diff > 0); '
	       || 'CREATE INDEX H_retractions ON mzcoord.H USING btree (ts) WHERE (diff < 0)'};

# The extension's catalog in database $db, one line per fact, sorted.
sub catalog_facts
{
	my ($node, $db) = @_;
	my $out = $node->safe_psql($db, q{
		WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'mzcoord'),
		members AS (
			SELECT d.classid, d.objid FROM pg_depend d, ext
			 WHERE d.refclassid = 'pg_extension'::regclass
			   AND d.refobjid = ext.oid AND d.deptype = 'e'),
		rels AS (SELECT c.* FROM pg_class c JOIN members m
		          ON m.classid = 'pg_class'::regclass AND m.objid = c.oid),
		procs AS (SELECT p.* FROM pg_proc p JOIN members m
		           ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid),
		owner AS (SELECT extowner AS oid FROM pg_extension WHERE extname = 'mzcoord'),
		facts(f) AS (
			SELECT 'member ' || pg_describe_object(classid, objid, 0) FROM members
			UNION ALL
			SELECT format('relation %s kind %s persistence %s', c.oid::regclass,
			              c.relkind, c.relpersistence) FROM rels c
			UNION ALL
			SELECT format('column %s.%s #%s %s notnull=%s default=%s identity=%s generated=%s',
			              c.oid::regclass, a.attname, a.attnum,
			              format_type(a.atttypid, a.atttypmod), a.attnotnull,
			              pg_get_expr(ad.adbin, ad.adrelid), a.attidentity, a.attgenerated)
			  FROM rels c JOIN pg_attribute a ON a.attrelid = c.oid
			  LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
			 WHERE a.attnum > 0 AND NOT a.attisdropped
			UNION ALL
			SELECT format('constraint %s.%s %s', co.conrelid::regclass, co.conname,
			              pg_get_constraintdef(co.oid))
			  FROM pg_constraint co JOIN rels c ON c.oid = co.conrelid
			UNION ALL
			SELECT format('index %s', pg_get_indexdef(i.indexrelid))
			  FROM pg_index i JOIN rels c ON c.oid = i.indrelid
			UNION ALL
			SELECT format('trigger %s on %s: %s', t.tgname, t.tgrelid::regclass,
			              pg_get_triggerdef(t.oid))
			  FROM pg_trigger t JOIN rels c ON c.oid = t.tgrelid
			 WHERE NOT t.tgisinternal
			UNION ALL
			SELECT format('view %s line %s: %s', c.oid::regclass, l.n, l.line)
			  FROM rels c,
			       regexp_split_to_table(pg_get_viewdef(c.oid), E'\n') WITH ORDINALITY AS l(line, n)
			 WHERE c.relkind IN ('v', 'm')
			UNION ALL
			SELECT format('sequence %s %s start %s inc %s min %s max %s cycle %s',
			              s.seqrelid::regclass, s.seqtypid::regtype, s.seqstart,
			              s.seqincrement, s.seqmin, s.seqmax, s.seqcycle)
			  FROM pg_sequence s JOIN rels c ON c.oid = s.seqrelid
			UNION ALL
			SELECT format('function %s line %s: %s', p.oid::regprocedure, l.n, l.line)
			  FROM procs p,
			       regexp_split_to_table(
			           CASE WHEN p.prokind = 'a'
			                THEN (SELECT format('aggregate sfunc %s stype %s final %s combine %s',
			                                    a.aggtransfn, a.aggtranstype::regtype,
			                                    a.aggfinalfn, a.aggcombinefn)
			                        FROM pg_aggregate a WHERE a.aggfnoid = p.oid)
			                ELSE pg_get_functiondef(p.oid) END, E'\n') WITH ORDINALITY AS l(line, n)
			UNION ALL
			SELECT format('acl relation %s %s %s grantable=%s', c.oid::regclass,
			              CASE WHEN x.grantee = 0 THEN 'PUBLIC'
			                   WHEN x.grantee = (SELECT oid FROM owner) THEN 'owner'
			                   ELSE x.grantee::regrole::text END,
			              x.privilege_type, x.is_grantable)
			  FROM rels c, aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) x
			UNION ALL
			SELECT format('acl function %s %s %s grantable=%s', p.oid::regprocedure,
			              CASE WHEN x.grantee = 0 THEN 'PUBLIC'
			                   WHEN x.grantee = (SELECT oid FROM owner) THEN 'owner'
			                   ELSE x.grantee::regrole::text END,
			              x.privilege_type, x.is_grantable)
			  FROM procs p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) x
			UNION ALL
			SELECT format('acl schema %s %s %s', n.nspname,
			              CASE WHEN x.grantee = 0 THEN 'PUBLIC'
			                   WHEN x.grantee = (SELECT oid FROM owner) THEN 'owner'
			                   ELSE x.grantee::regrole::text END,
			              x.privilege_type)
			  FROM pg_namespace n, aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) x
			 WHERE n.nspname = 'mzcoord'
			UNION ALL
			SELECT format('comment %s: %s', pg_describe_object(d.classoid, d.objoid, d.objsubid),
			              replace(d.description, E'\n', ' '))
			  FROM pg_description d JOIN members m
			    ON m.classid = d.classoid AND m.objid = d.objoid
			UNION ALL
			SELECT format('event trigger %s on %s: %s tags %s enabled %s', e.evtname,
			              e.evtevent, e.evtfoid::regproc, e.evttags, e.evtenabled)
			  FROM pg_event_trigger e JOIN members m
			    ON m.classid = 'pg_event_trigger'::regclass AND m.objid = e.oid
			UNION ALL
			SELECT format('config table %s condition %s', cfg.rel, cfg.cond)
			  FROM pg_extension e,
			       unnest(e.extconfig::regclass[], e.extcondition) AS cfg(rel, cond)
			 WHERE e.extname = 'mzcoord')
		SELECT f FROM facts ORDER BY f COLLATE "C"});
	return split /\n/, $out;
}

# Print and count the facts of one catalog that the other lacks.
sub compare_catalogs
{
	my ($node, $db_a, $db_b, $what) = @_;
	# Histories are data (one per collection), not the catalog's shape.
	my @a = grep { !/mzcoord\.history_u\d+/ } catalog_facts($node, $db_a);
	my @b = grep { !/mzcoord\.history_u\d+/ } catalog_facts($node, $db_b);
	my %in_a = map { $_ => 1 } @a;
	my %in_b = map { $_ => 1 } @b;
	my @only_a = grep { !$in_b{$_} } @a;
	my @only_b = grep { !$in_a{$_} } @b;
	diag("only in $db_a: $_") for @only_a;
	diag("only in $db_b: $_") for @only_b;
	cmp_ok(scalar(@a), '>', 200, "the catalog of $db_a has its facts (" . scalar(@a) . ')');
	is(scalar(@only_a) + scalar(@only_b), 0, $what);
}

# A call that needs the controller fails at once with 55000 and the hint.
sub fails_outdated
{
	my ($node, $sql, $what) = @_;
	my $t0 = time;
	my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	my $secs = time - $t0;
	isnt($ret, 0, "$what fails");
	like($err, qr/ERROR:  55000: extension "mzcoord" is at version 0\.1, but its library needs version \Q$current\E/,
		"$what: 55000, naming both versions");
	like($err, qr/HINT:  Run ALTER EXTENSION mzcoord UPDATE\./, "$what: the hint names ALTER EXTENSION mzcoord UPDATE");
	cmp_ok($secs, '<', 20, "$what fails at once, not after mzcoord.ready_timeout (${secs}s)");
}

# The coordinator waits for the update, and says so once.
sub waits_for_update
{
	my ($node, $log_offset) = @_;
	$node->poll_query_until('postgres',
		q{SELECT state = 'waiting for extension update' FROM mzcoord.worker_status()})
	  or die 'the coordinator does not wait for the update';
	pass('the coordinator waits for the extension update');
	# Some more ticks: still one line.
	my $ticks = $node->safe_psql('postgres', 'SELECT ticks FROM mzcoord.worker_status()');
	usleep(500_000);
	my $log = slurp_file($node->logfile, $log_offset);
	my $n = () = $log =~ /LOG:  mzcoord coordinator is waiting for ALTER EXTENSION mzcoord UPDATE in database "postgres"/g;
	is($n, 1, 'one LOG line names ALTER EXTENSION mzcoord UPDATE');
	like($log, qr/DETAIL:  The extension's catalog is at version 0\.1; this library needs version \Q$current\E\./,
		'its detail names both versions');
	is($node->safe_psql('postgres', 'SELECT ticks FROM mzcoord.worker_status()'), $ticks,
		'the coordinator runs no tick against the 0.1 catalog');
	is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_class
		WHERE relname = 'compaction_bounds' AND relnamespace = 'mzcoord'::regnamespace}),
		'0', 'the 0.1 catalog has no compaction bounds');
}

sub update_extension
{
	my ($node) = @_;
	$node->safe_psql('postgres', 'ALTER EXTENSION mzcoord UPDATE');
	is($node->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'mzcoord'}),
		$current, "ALTER EXTENSION mzcoord UPDATE brings the catalog to $current");
	$node->poll_query_until('postgres', 'SELECT ready FROM mzcoord.controller_status()')
	  or die 'controller not ready after the update';
	pass('the coordinator starts once the update has committed');
}

# ---------------------------------------------------------------------------
# Part 1: the current library with a 0.1 catalog
# ---------------------------------------------------------------------------

my $node = PostgreSQL::Test::Cluster->new('upgrade_new');
$node->init;
$node->append_conf('postgresql.conf', $conf);
$node->start;

# Every C function of the 0.1 script is in the library (CREATE FUNCTION
# would fail otherwise).
my $script = slurp_file($node->config_data('--sharedir') . '/extension/mzcoord--0.1.sql');
my %symbols = map { $_ => 1 } ($script =~ /'MODULE_PATHNAME',\s*'(\w+)'/g);
my $nm = `nm -D --defined-only '@{[ $node->config_data('--pkglibdir') ]}/mzcoord.so'`;
is($?, 0, 'nm reads the library');
my %defined = map { (split)[-1] => 1 } split /\n/, $nm;
my @missing = grep { !$defined{$_} } sort keys %symbols;
diag("missing from the library: @missing") if @missing;
cmp_ok(scalar(keys %symbols), '>', 30, 'the 0.1 script names its C functions');
is(scalar(@missing), 0, 'every C function of the 0.1 script is in the library');

my $offset = -s $node->logfile;
$node->safe_psql('postgres', q{CREATE EXTENSION mzcoord VERSION '0.1'});
is($node->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'mzcoord'}),
	'0.1', 'CREATE EXTENSION mzcoord VERSION 0.1 works with the current library');
waits_for_update($node, $offset);
$node->safe_psql('postgres', 'CREATE TABLE t (k int)');
fails_outdated($node, q{SELECT mzcoord.create_table('t')}, 'create_table on a 0.1 catalog');
fails_outdated($node, q{SELECT mzcoord.select_timestamp(ARRAY['t'::regclass])},
	'select_timestamp on a 0.1 catalog');

update_extension($node);
$node->safe_psql('postgres', q{SELECT mzcoord.create_table('t'); INSERT INTO t VALUES (1)});
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency() finds nothing after the update of an empty catalog');

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION mzcoord');
is($node->safe_psql('fresh', q{SELECT extversion FROM pg_extension WHERE extname = 'mzcoord'}),
	$current, "a fresh install is $current");
compare_catalogs($node, 'postgres', 'fresh',
	'an empty 0.1 catalog, updated, equals a fresh install');

# Part 1b: a 0.2 catalog (the frozen 0.1 script and its update to 0.2), and
# part 1c: a 0.3 catalog (and its update to 0.3), each updated.
foreach my $v ('0.2', '0.3', '0.4', '0.5', '0.6', '0.7', '0.8')
{
	(my $db = "from$v") =~ s/\.//;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION mzcoord VERSION '$v'");
	is($node->safe_psql($db, q{SELECT extversion FROM pg_extension WHERE extname = 'mzcoord'}),
		$v, "CREATE EXTENSION mzcoord VERSION $v works with the current library");
	$node->safe_psql($db, 'ALTER EXTENSION mzcoord UPDATE');
	compare_catalogs($node, $db, 'fresh',
		"an empty $v catalog, updated, equals a fresh install");
}
$node->stop;

# ---------------------------------------------------------------------------
# Part 2: a cluster that ran the 0.1 library, updated
# ---------------------------------------------------------------------------

my $old_install = $ENV{MZCOORD_OLD_INSTALL};
SKIP:
{
	skip 'MZCOORD_OLD_INSTALL (the 0.1 library, built by scripts/test.sh) is not set', 1
	  unless $old_install && -x "$old_install/bin/postgres";

	my $old = PostgreSQL::Test::Cluster->new('upgrade_old', install_path => $old_install);
	$old->init;
	$old->append_conf('postgresql.conf', $conf);
	$old->start;
	$old->safe_psql('postgres', 'CREATE EXTENSION mzcoord');
	is($old->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'mzcoord'}),
		'0.1', 'the 0.1 library installs catalog 0.1');
	$old->poll_query_until('postgres', 'SELECT ready FROM mzcoord.controller_status()')
	  or die 'the 0.1 controller is not ready';

	$old->safe_psql('postgres', q{
		CREATE TABLE keep (k int, v text);
		INSERT INTO keep SELECT g, 'v' || g FROM generate_series(1, 20) g;
		SELECT mzcoord.create_table('keep', '1 hour');
		CREATE TABLE short (k int);
		SELECT mzcoord.create_table('short', '1 second');
		SELECT mzcoord.create_source('src', 'k int, v text', '1 hour');
		SELECT mzcoord.create_materialized_view('mv', 'SELECT k, v FROM public.keep WHERE k > 2', '1 hour');
		SELECT mzcoord.create_index('keep_k', 'keep', ARRAY['k']);
		SELECT mzcoord.create_sink('keep_out', 'keep');
	});
	$old->safe_psql('postgres', $_) for (
		q{UPDATE keep SET v = v || '+' WHERE k <= 5},
		q{DELETE FROM keep WHERE k > 15},
		q{INSERT INTO keep VALUES (100, NULL), (100, NULL)},
		q{INSERT INTO short SELECT generate_series(1, 50)},
		q{DELETE FROM short WHERE k % 2 = 0},
		q{UPDATE short SET k = -k WHERE k < 10});
	my $u0 = $old->safe_psql('postgres',
		q{SELECT upper FROM mzcoord.frontiers WHERE relation = 'src'::regclass});
	$old->safe_psql('postgres', qq{
		SELECT mzcoord.append(NULL::src, $u0, ARRAY[ROW(1, 'a'), ROW(1, 'a'), ROW(2, 'b')]::src[]);
		SELECT mzcoord.append(NULL::src, $u0 + 5, ARRAY[ROW(3, 'c')]::src[], ARRAY[ROW(1, 'a')]::src[]);
		SELECT mzcoord.advance_upper('src', $u0 + 10);
	});
	my $last = $old->safe_psql('postgres',
		q{UPDATE keep SET v = 'last' WHERE k = 1; SELECT mzcoord.last_commit_ts()});

	# The coordinator compacts 'short' past its writes; then its since
	# stops (a long retain history) and it is compacted up to it, so that
	# its history stays as it is across the update.
	my $short_history = $old->safe_psql('postgres',
		q{SELECT history FROM mzcoord.storage WHERE relation = 'short'::regclass});
	my $short_last = $old->safe_psql('postgres', "SELECT max(ts) FROM $short_history");
	$old->poll_query_until('postgres', qq{
		SELECT compacted > $short_last FROM mzcoord.storage WHERE relation = 'short'::regclass})
	  or die 'short was not compacted';
	pass('the 0.1 coordinator compacted a history');
	$old->safe_psql('postgres', q{SELECT mzcoord.set_retain_history('short', '1 hour')});
	usleep(300_000);
	$old->safe_psql('postgres', q{SELECT mzcoord.compact('short')});
	usleep(300_000);

	my $frontiers_sql = q{
		SELECT string_agg(format('%s %s %s %s %s', f.global_id, f.kind,
		                         coalesce(f.since::text, '{}'), coalesce(f.upper::text, '{}'),
		                         coalesce(c.since::text, '{}')), E'\n' ORDER BY f.global_id)
		  FROM mzcoord.frontiers f JOIN mzcoord.collections c USING (global_id)};
	my %before = map { my ($g, @v) = split / /; ($g => \@v) } split /\n/,
	  $old->safe_psql('postgres', $frontiers_sql);
	is(scalar(keys %before), 6, 'six collections before the update');

	# Reads at times within [since, upper) of the tables and the source.
	my %since = map { $_ => $old->safe_psql('postgres',
		qq{SELECT since FROM mzcoord.frontiers WHERE relation = '$_'::regclass}) } qw(keep short src);
	my %times = (
		keep => [ $since{keep}, int(($since{keep} + $last) / 2), $last ],
		short => [ $since{short}, $since{short} + 1 ],
		src => [ $since{src}, $u0 + 5, $u0 + 9 ]);
	my $reads = sub {
		my ($n) = @_;
		my $out = '';
		for my $r (qw(keep short src))
		{
			for my $t (@{ $times{$r} })
			{
				$out .= "$r\@$t: " . $n->safe_psql('postgres', qq{
					SELECT coalesce(string_agg(x::text, ' ' ORDER BY x::text), '')
					  FROM mzcoord.read_at(NULL::$r, $t) x}) . "\n";
			}
		}
		return $out;
	};
	my $history_sql = q{
		SELECT string_agg(format('%s %s', s.global_id,
		       (xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %s', s.history),
		                                            false, true, '')))[1]::text), ' '
		                  ORDER BY s.global_id)
		  FROM mzcoord.storage s WHERE s.kind IN ('table', 'source')};
	my $reads_before = $reads->($old);
	like($reads_before, qr/^src\@\d+: \(1,a\) \(1,a\) \(2,b\)$/m, 'the reads show multiplicities');
	like($reads_before, qr/^keep\@$last: .*\(1,last\)/m, 'the reads show the last write');
	my $history_before = $old->safe_psql('postgres', $history_sql);
	my $compacted_before = $old->safe_psql('postgres',
		q{SELECT compacted FROM mzcoord.storage WHERE relation = 'short'::regclass});
	cmp_ok($compacted_before, '>', $short_last, 'short is compacted past its writes');

	# --- The new library: stop, start the data directory with it ----------
	$old->stop;
	$old->backup_fs_cold('cold');
	my $new = PostgreSQL::Test::Cluster->new('upgrade_after');
	$new->init_from_backup($old, 'cold');
	$offset = -s $new->logfile // 0;
	$new->start;

	waits_for_update($new, $offset);
	fails_outdated($new, qq{SELECT * FROM mzcoord.read_at(NULL::keep, $last)},
		'read_at with the current library on the 0.1 catalog');
	fails_outdated($new, q{INSERT INTO keep VALUES (500, 'too early')},
		'a write to a registered table with the current library on the 0.1 catalog');

	update_extension($new);

	my %after = map { my ($g, @v) = split / /; ($g => \@v) } split /\n/,
	  $new->safe_psql('postgres', $frontiers_sql);
	foreach my $g (sort keys %before)
	{
		my ($kind, $since, $upper, $dsince) = @{ $before{$g} };
		my ($kind2, $since2, $upper2, $dsince2) = @{ $after{$g} // [] };
		is($kind2, $kind, "$g ($kind) is still there");
		for my $p ([ 'since', $since, $since2 ], [ 'upper', $upper, $upper2 ],
				   [ 'durable since', $dsince, $dsince2 ])
		{
			my ($what, $b, $a) = @$p;
			ok(($b eq '{}' && $a eq '{}') || ($b ne '{}' && ($a eq '{}' || $a >= $b)),
				"$what of $g did not regress ($b -> $a)");
		}
	}
	is($reads->($new), $reads_before, 'every recorded read answers the same after the update');
	is($new->safe_psql('postgres', $history_sql), $history_before,
		'the histories have the same rows');
	is($new->safe_psql('postgres', $history_index_sql), '',
		'every history has the two indexes a 0.9 history has (insertions, retractions)');

	# The backfill.
	is($new->safe_psql('postgres', q{
		SELECT string_agg(i.kind || ' ' || (b.bound >= c.since), ',' ORDER BY c.global_id)
		  FROM mzcoord.collections c JOIN mzcoord.items i ON i.id = c.item_id
		  LEFT JOIN mzcoord.compaction_bounds b ON b.global_id = c.global_id
		 WHERE mzcoord._kind_has_bound(i.kind)}),
		'table true,table true,source true,materialized_view true',
		'every collection with history has a bound, at or above the since 0.1 left');
	is($new->safe_psql('postgres', q{SELECT count(*) FROM mzcoord.compaction_bounds}),
		'4', 'and nothing else has one');
	is($new->safe_psql('postgres', q{
		SELECT string_agg(format('%s %s %s', i.name, r.input_global_id,
		                         r.at IS NOT NULL AND r.at >= c.as_of AND r.at >= b.bound),
		                  ',' ORDER BY i.name)
		  FROM mzcoord.read_requirements r JOIN mzcoord.items i ON i.id = r.item_id
		  JOIN mzcoord.collections c ON c.global_id = r.item_id
		  JOIN mzcoord.compaction_bounds b ON b.global_id = r.input_global_id}),
		'keep_k u1 t,keep_out u1 t,mv u1 t',
		'the materialized view, the index and the sink require their input from their as-of on, not below its bound');
	cmp_ok($new->safe_psql('postgres', 'SELECT epoch FROM mzcoord.coordinator_epoch'),
		'>=', 1, 'the coordinator took an epoch');

	# Writes after the update are captured and readable.
	my $w = $new->safe_psql('postgres',
		q{INSERT INTO keep VALUES (7, 'after'); SELECT mzcoord.last_commit_ts()});
	like($new->safe_psql('postgres',
		qq{SELECT string_agg(x::text, ' ') FROM mzcoord.read_at(NULL::keep, $w) x WHERE k = 7}),
		qr/\(7,after\)/, 'a write after the update is captured and readable');
	$new->safe_psql('postgres', qq{
		SELECT mzcoord.append(NULL::src, $u0 + 10, ARRAY[ROW(5, 'e')]::src[]);
		SELECT mzcoord.advance_upper('src', $u0 + 25)});
	is($new->safe_psql('postgres', q{SELECT string_agg(k::text, ',' ORDER BY k) FROM src}),
		'1,2,3,5', 'the source takes appends after the update');
	$new->safe_psql('postgres',
		q{SELECT mzcoord.create_materialized_view('mv2', 'SELECT k FROM public.short')});
	pass('a materialized view can be created after the update');

	# The view made under 0.1 was never computed; now it is, from its
	# as-of on: at the last write's time it equals its query.
	$new->poll_query_until('postgres',
		qq{SELECT upper > $w FROM mzcoord.frontiers WHERE relation = 'mv'::regclass})
	  or die 'the materialized view does not advance after the update';
	is($new->safe_psql('postgres', qq{
		SELECT count(*) FROM (
		  (SELECT * FROM mzcoord.read_at(NULL::mv, $w)
		   EXCEPT ALL SELECT k, v FROM mzcoord.read_at(NULL::keep, $w) WHERE k > 2)
		  UNION ALL
		  (SELECT k, v FROM mzcoord.read_at(NULL::keep, $w) WHERE k > 2
		   EXCEPT ALL SELECT * FROM mzcoord.read_at(NULL::mv, $w))) d}),
		'0', 'the materialized view made under 0.1 computes after the update');

	# Let the coordinator tick and publish; then the checks.
	my $ticks = $new->safe_psql('postgres', 'SELECT ticks FROM mzcoord.worker_status()');
	$new->poll_query_until('postgres', "SELECT ticks > $ticks + 5 FROM mzcoord.worker_status()")
	  or die 'no ticks';
	is($new->safe_psql('postgres', q{
		SELECT coalesce(string_agg(format('%s %s: %s', check_name, object, detail), E'\n'), '')
		  FROM mzcoord.check_consistency()}),
		'', 'check_consistency() returns no rows');

	$new->safe_psql('postgres', 'CREATE DATABASE fresh');
	$new->safe_psql('fresh', 'CREATE EXTENSION mzcoord');
	compare_catalogs($new, 'postgres', 'fresh',
		'the updated catalog of a used 0.1 cluster equals a fresh install');
	$new->stop;
}

done_testing();
