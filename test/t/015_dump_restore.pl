# pg_dump / pg_restore (issue 14): a dump of a database using mzcoord
# restores, on another node, to the same catalog, the same histories and
# frontiers; after mzcoord.restore_after_dump() writes are captured again,
# the next registration gets a fresh id and time does not go back.  Before
# that step check_consistency() reports the restore as incomplete.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $src = mzcoord_node('dumpsrc', create_extension => 1);

$src->safe_psql('postgres', q{
	CREATE TABLE t1 (k int, v text);
	INSERT INTO t1 SELECT g, 'v' || g FROM generate_series(1, 10) g;
	SELECT mzcoord.create_table('t1', '1 hour');
	CREATE TABLE t2 (k int);
	SELECT mzcoord.create_table('t2', '1 hour');
	SELECT mzcoord.create_source('s1', 'k int, v text', '1 hour');
	SELECT mzcoord.create_materialized_view('mv1', 'SELECT k FROM public.t1 WHERE k > 2', '1 hour');
	SELECT mzcoord.create_sink('k1', 't2');
});
$src->safe_psql('postgres', $_) for (
	q{UPDATE t1 SET v = v || '+' WHERE k <= 3},
	q{DELETE FROM t1 WHERE k > 8},
	q{INSERT INTO t2 SELECT generate_series(1, 5)},
	q{DELETE FROM t2 WHERE k = 2});
my $u0 = $src->safe_psql('postgres',
	q{SELECT upper FROM mzcoord.frontiers WHERE relation = 's1'::regclass});
$src->safe_psql('postgres', qq{
	SELECT mzcoord.append(NULL::s1, $u0, ARRAY[(1, 'a'), (2, 'b')]::s1[]);
	SELECT mzcoord.append(NULL::s1, $u0 + 5, ARRAY[(3, 'c')]::s1[],
	                      ARRAY[(1, 'a')]::s1[]);
	SELECT mzcoord.advance_upper('s1', $u0 + 10);
});
my $last = $src->safe_psql('postgres',
	q{UPDATE t2 SET k = k * 10; SELECT mzcoord.last_commit_ts()});

my $since = $src->safe_psql('postgres',
	q{SELECT max(since) FROM mzcoord.frontiers WHERE relation IN ('t1'::regclass, 't2'::regclass)});
# Each relation at times its since allows.
my %times = (
	t1 => [ $since, int(($since + $last) / 2), $last ],
	t2 => [ $since, int(($since + $last) / 2), $last ],
	s1 => [ $u0, $u0 + 5, $u0 + 9 ],
	mv1 => [ $last ]);
my $reads = sub {
	my ($node, $db) = @_;
	my $out = '';
	for my $r (qw(t1 t2 s1 mv1))
	{
		for my $t (@{ $times{$r} })
		{
			$out .= "$r\@$t: " . $node->safe_psql($db, qq{
				SELECT coalesce(string_agg(x::text, ',' ORDER BY x::text), '')
				  FROM mzcoord.read_at(NULL::$r, $t) x}) . "\n";
		}
	}
	return $out;
};
my $catalog_sql = q{
	SELECT string_agg(x::text, E'\n' ORDER BY x::text) FROM (
	  SELECT 'i', id, kind, schema_name, name, relation::text, owner::text, retain_history::text FROM mzcoord.items
	  UNION ALL SELECT 'c', global_id, item_id, version::text, primary_id, as_of::text,
	                   -- a sink's since and upper move on as it exports, a
	                   -- view's upper as it refreshes: compared below
	                   CASE WHEN global_id IN (SELECT id FROM mzcoord.items WHERE kind = 'sink')
	                        THEN 'exported' ELSE since::text END,
	                   CASE WHEN global_id IN (SELECT id FROM mzcoord.items
	                                            WHERE kind IN ('materialized_view', 'sink'))
	                        THEN 'moves' ELSE upper::text END
	    FROM mzcoord.collections
	  UNION ALL SELECT 's', global_id, relation::text, kind, history::text, compacted::text, compacted_rows::text, '' FROM mzcoord.storage) x};
# Stop the source's world: no writes from here on.
my $reads_before = $reads->($src, 'postgres');
my $catalog_before = $src->safe_psql('postgres', $catalog_sql);
my $mv_upper_before = $src->safe_psql('postgres',
	q{SELECT upper FROM mzcoord.collections WHERE global_id = (SELECT id FROM mzcoord.items WHERE name = 'mv1')});
is($src->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'source consistent before the dump');

my $dump = $src->basedir . '/mz.dump';
my $bin = $src->config_data('--bindir');
command_ok([ "$bin/pg_dump", '-Fc', '-d', $src->connstr('postgres'), '-f', $dump ],
	'pg_dump');

my $dst = mzcoord_node('dumpdst', conf => "mzcoord.database = 'restored'\n");
$dst->safe_psql('postgres', 'CREATE DATABASE restored');
command_ok([ "$bin/pg_restore", '--exit-on-error', '-d', $dst->connstr('restored'), $dump ],
	'pg_restore');
$dst->poll_query_until('restored', 'SELECT ready FROM mzcoord.controller_status()')
  or die 'controller not ready';

is($dst->safe_psql('restored', $catalog_sql), $catalog_before,
	'items, collections and storage restored');
cmp_ok($dst->safe_psql('restored',
	q{SELECT upper FROM mzcoord.collections WHERE global_id = (SELECT id FROM mzcoord.items WHERE name = 'mv1')}),
	'>=', $mv_upper_before, 'the view is restored at least as far as it was');

# Not yet usable: check_consistency() says so.
my $problems = $dst->safe_psql('restored',
	'SELECT string_agg(DISTINCT check_name, \', \') FROM mzcoord.check_consistency()');
like($problems, qr/capture triggers missing/, 'before restore_after_dump: triggers reported');
like($problems, qr/history not attached/, 'before restore_after_dump: dependencies reported');
note "problems before restore_after_dump: $problems";

my $boots = $dst->safe_psql('restored', 'SELECT bootstraps FROM mzcoord.controller_status()');
is($dst->safe_psql('restored', 'SELECT * FROM mzcoord.restore_after_dump()'),
	'4|10', 'restore_after_dump attaches 4 histories (tables, source, view) with 10 triggers');
cmp_ok($dst->safe_psql('restored', 'SELECT bootstraps FROM mzcoord.controller_status()'),
	'>', $boots, 'restore_after_dump waited for the controller to reload');
is($dst->safe_psql('restored', 'SELECT * FROM mzcoord.restore_after_dump()'),
	'4|0', 'restore_after_dump again changes nothing');

is($dst->safe_psql('restored', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'consistent after restore_after_dump')
  or diag $dst->safe_psql('restored', 'SELECT * FROM mzcoord.check_consistency()');
is($reads->($dst, 'restored'), $reads_before, 'reads at the recorded times are the same');

# Time goes on from the restored frontiers; writes are captured; the next
# registration gets a new id.
my $now = $dst->safe_psql('restored',
	q{INSERT INTO t1 VALUES (42, 'new'); SELECT mzcoord.last_commit_ts()});
cmp_ok($now, '>', $last, 'time does not go back after the restore');
is($dst->safe_psql('restored', qq{SELECT count(*) FROM mzcoord.read_at(NULL::t1, $now) WHERE k = 42}),
	'1', 'new write captured');
$dst->safe_psql('restored', q{CREATE TABLE t3 (k int); SELECT mzcoord.create_table('t3')});
is($dst->safe_psql('restored',
	q{SELECT count(*) FROM mzcoord.items WHERE relation = 't3'::regclass}),
	'1', 'next registration does not collide');
$dst->safe_psql('restored', qq{SELECT mzcoord.append(NULL::s1, $u0 + 10, ARRAY[(7, 'x')]::s1[])});
is($dst->safe_psql('restored', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'still consistent after new writes')
  or diag $dst->safe_psql('restored', 'SELECT * FROM mzcoord.check_consistency()');
my ($ret) = $dst->psql('restored', q{INSERT INTO s1 VALUES (1, 'direct')});
isnt($ret, 0, 'source guard re-established');
my ($r2, $o2, $e2) = $dst->psql('restored', q{DROP TABLE t1});
like($e2, qr/other objects depend on it/, 'materialized view depends on its input again');
($r2, $o2, $e2) = $dst->psql('restored', q{DROP TABLE t2});
like($e2, qr/other objects depend on it/, 'sink depends on its item again');

# An incomplete restore (a history left out) fails loudly: pg_restore
# cannot load mzcoord.storage, check_consistency() reports it and
# restore_after_dump() refuses.
my $part = mzcoord_node('dumppart', conf => "mzcoord.database = 'partial'\n");
$part->safe_psql('postgres', 'CREATE DATABASE partial');
my $hist = $src->safe_psql('postgres',
	q{SELECT h.relname FROM mzcoord.storage s JOIN pg_class h ON h.oid = s.history
	   WHERE s.relation = 't2'::regclass});
my ($list) = run_command([ "$bin/pg_restore", '-l', $dump ]);
my $listfile = $part->basedir . '/partial.list';
open(my $fh, '>', $listfile) or die $!;
print $fh join("\n", grep { !/\b\Q$hist\E(?:_insertions|_retractions)?\b/ } split /\n/, $list), "\n";
close $fh;
command_fails_like(
	[ "$bin/pg_restore", '-L', $listfile, '-d', $part->connstr('partial'), $dump ],
	qr/relation "mzcoord\.history_u\d+" does not exist/,
	'pg_restore without a history fails');
$part->poll_query_until('partial', 'SELECT ready FROM mzcoord.controller_status()')
  or die 'controller not ready';
like($part->safe_psql('partial',
	'SELECT string_agg(DISTINCT check_name, \', \') FROM mzcoord.check_consistency()'),
	qr/collection without history/, 'missing history reported');
my ($r3, $o3, $e3) = $part->psql('partial', 'SELECT * FROM mzcoord.restore_after_dump()');
like($e3, qr/restore is incomplete/, 'restore_after_dump refuses an incomplete restore');

done_testing();
