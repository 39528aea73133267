# Histories and frontiers across a crash restart: everything committed is
# read back at every time the since still allows, exactly as before; what
# was in flight (a table write, a source append with its upper advance) is
# gone; source uppers and compacted frontiers do not regress; new writes
# land after everything that came before.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mzcoord_node('storagerestart', create_extension => 1);

$node->safe_psql('postgres', q{
	CREATE TABLE keep (k int, v text, j json);
	INSERT INTO keep SELECT g, 'v' || g, ('{"g": ' || g || '}')::json FROM generate_series(1, 20) g;
	SELECT mzcoord.create_table('keep', '1 hour');
	CREATE TABLE short (k int);
	SELECT mzcoord.create_table('short', '1 second');
	SELECT mzcoord.create_source('src', 'k int, v text', '1 hour');
});

# A history with every kind of write, in separate transactions.
$node->safe_psql('postgres', $_) for (
	q{UPDATE keep SET v = v || '+' WHERE k <= 5},
	q{DELETE FROM keep WHERE k > 15},
	q{INSERT INTO keep VALUES (100, NULL, NULL), (100, NULL, NULL)},
	q{BEGIN; TRUNCATE keep; INSERT INTO keep VALUES (1, 'again', '[]'); COMMIT},
	q{INSERT INTO short SELECT generate_series(1, 50)},
	q{DELETE FROM short WHERE k % 2 = 0},
	q{UPDATE short SET k = -k WHERE k < 10});

# A source: appends at several times, an advance past some of them, and an
# append beyond the upper (committed, not yet complete).
my $u0 = $node->safe_psql('postgres',
	q{SELECT upper FROM mzcoord.frontiers WHERE relation = 'src'::regclass});
$node->safe_psql('postgres', qq{
	SELECT mzcoord.append(NULL::src, $u0, ARRAY[ROW(1, 'a'), ROW(1, 'a'), ROW(2, 'b')]::src[]);
	SELECT mzcoord.append(NULL::src, $u0 + 5, ARRAY[ROW(3, 'c')]::src[], ARRAY[ROW(1, 'a')]::src[]);
	SELECT mzcoord.advance_upper('src', $u0 + 10);
	SELECT mzcoord.append(NULL::src, $u0 + 20, ARRAY[ROW(4, 'd')]::src[]);
});

# Wait until 'short' is compacted past its writes.
my $short_last = $node->safe_psql('postgres', q{
	SELECT max(ts) FROM mzcoord.history_u2});
$node->poll_query_until('postgres', qq{
	SELECT compacted > $short_last FROM mzcoord.storage WHERE relation = 'short'::regclass})
  or die 'short was not compacted';

# Every time anything was written at, read back; and the relations.
sub snapshot
{
	my ($n) = @_;
	return $n->safe_psql('postgres', q{
		WITH times AS (
			SELECT 'keep'::regclass AS rel, ts FROM mzcoord.history_u1
			UNION SELECT 'src'::regclass, ts FROM mzcoord.history_u3
			 WHERE ts < (SELECT upper FROM mzcoord.frontiers WHERE relation = 'src'::regclass))
		SELECT string_agg(format('%s@%s: %s', rel, ts, rows), E'\n' ORDER BY rel::text, ts)
		  FROM times,
		       LATERAL (SELECT string_agg(r, ' ' ORDER BY r) AS rows
		                  FROM (SELECT x::text AS r FROM mzcoord.read_at(NULL::keep, ts) x
		                         WHERE rel = 'keep'::regclass
		                        UNION ALL
		                        SELECT x::text FROM mzcoord.read_at(NULL::src, ts) x
		                         WHERE rel = 'src'::regclass) y) z;
	}) . "\n" . $n->safe_psql('postgres', q{
		SELECT format('short %s; keep %s; src %s',
			(SELECT string_agg(k::text, ',' ORDER BY k) FROM short),
			(SELECT count(*) FROM keep),
			(SELECT string_agg(s::text, ' ' ORDER BY s::text) FROM src s))});
}
my $before = snapshot($node);
cmp_ok(scalar(() = $before =~ /^(keep|src)@/mg), '==', 7,
	'the snapshot reads the tables and the source at every time they were written');
like($before, qr/^src@\d+: \(1,a\) \(1,a\) \(2,b\)$/m, 'the snapshot shows multiplicities');
my $frontiers_before = $node->safe_psql('postgres', q{
	SELECT string_agg(format('%s %s %s %s', s.global_id, s.compacted, c.upper, f.since),
	                  ',' ORDER BY s.global_id)
	  FROM mzcoord.storage s JOIN mzcoord._durable_frontiers c USING (global_id)
	  JOIN mzcoord.frontiers f ON f.global_id = s.global_id});
my $last_write = $node->safe_psql('postgres', q{
	SELECT greatest((SELECT max(ts) FROM mzcoord.history_u1),
	                (SELECT max(ts) FROM mzcoord.history_u2))});

# In flight at the crash: a table write, and an append with an advance.
my $writer = $node->background_psql('postgres');
$writer->query_safe(q{BEGIN; INSERT INTO keep VALUES (999, 'lost', NULL)});
my $appender = $node->background_psql('postgres');
$appender->query_safe(qq{BEGIN;
	SELECT mzcoord.append(NULL::src, $u0 + 30, ARRAY[ROW(999, 'lost')]::src[]);
	SELECT mzcoord.advance_upper('src', $u0 + 40)});

# --- Crash --------------------------------------------------------------------
$node->stop('immediate');
eval { $writer->quit; };
eval { $appender->quit; };
$node->start;
$node->poll_query_until('postgres', 'SELECT ready FROM mzcoord.controller_status()')
  or die 'controller not ready after restart';
pass('controller bootstrapped after the crash');

is(snapshot($node), $before,
	'every committed time reads back the same, and the relations are the same');
is($node->safe_psql('postgres', q{
	SELECT (SELECT count(*) FROM keep WHERE k = 999) + (SELECT count(*) FROM src WHERE k = 999)}),
	'0', 'what was in flight at the crash is gone');

my %after = map { my ($g, @v) = split / /; ($g => \@v) } split /,/,
  $node->safe_psql('postgres', q{
	SELECT string_agg(format('%s %s %s %s', s.global_id, s.compacted, c.upper, f.since),
	                  ',' ORDER BY s.global_id)
	  FROM mzcoord.storage s JOIN mzcoord._durable_frontiers c USING (global_id)
	  JOIN mzcoord.frontiers f ON f.global_id = s.global_id});
foreach my $row (split /,/, $frontiers_before)
{
	my ($g, $compacted, $upper, $since) = split / /, $row;
	cmp_ok($after{$g}[0], '>=', $compacted, "compacted frontier of $g did not regress");
	cmp_ok($after{$g}[0], '<=', $after{$g}[2], "compacted frontier of $g is not beyond its since");
	cmp_ok($after{$g}[2], '>=', $since, "since of $g did not regress");
}
is($after{u3}[1], $u0 + 10, 'the source upper is the one last committed');

# After the restart: table writes come after everything before, and the
# source takes appends at its upper and refuses them below.
$node->safe_psql('postgres', q{INSERT INTO keep VALUES (7, 'after', NULL)});
cmp_ok($node->safe_psql('postgres', q{SELECT max(ts) FROM mzcoord.history_u1}),
	'>', $last_write, 'a write after the restart is later than every write before');
my ($ret, $out, $err) = $node->psql('postgres', qq{
	SELECT mzcoord.append(NULL::src, $u0 + 9, ARRAY[ROW(5, 'e')]::src[])});
like($err, qr/cannot append to source "src" at timestamp/, 'an append below the upper is refused');
$node->safe_psql('postgres', qq{
	SELECT mzcoord.append(NULL::src, $u0 + 10, ARRAY[ROW(5, 'e')]::src[]);
	SELECT mzcoord.advance_upper('src', $u0 + 25)});
is($node->safe_psql('postgres', q{SELECT string_agg(k::text, ',' ORDER BY k) FROM src}),
	'1,2,3,4,5', 'the source shows what was appended before and after the crash');

# Compaction goes on after the restart.
$node->safe_psql('postgres', q{UPDATE short SET k = 1000 WHERE k = 11});
my $w = $node->safe_psql('postgres', q{SELECT max(ts) FROM mzcoord.history_u2});
$node->poll_query_until('postgres', qq{
	SELECT compacted > $w FROM mzcoord.storage WHERE relation = 'short'::regclass})
  or die 'short was not compacted after the restart';
pass('compaction goes on after the restart');

is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'consistent after the crash restart');
$node->stop;
done_testing();
