# Time travel on a hot standby (issue 22).
#
# A streaming standby (hot_standby_feedback on) serves mzcoord.read_at,
# mzcoord.changes, select_timestamp and explain_timestamp of tables and
# materialized views from what it replayed: the table
# timeline's upper from the oracle's WAL record, a view's upper and every
# compaction bound from the replayed catalog.
#
#  1. rows written on the primary at several times: read_at on the standby
#     (as a function and as the read_at scan) gives exactly the primary's
#     rows at each time, for a table and for a view over it, and changes
#     between two times the primary's updates;
#  2. a read on the standby at a time the primary just handed out, started
#     before the standby replayed it, waits and then sees the write;
#  3. once the primary compacted past a time, a standby read there (and
#     changes after it) is refused with 55000, never answered from
#     compacted history;
#  4. select_timestamp on the standby: strict serializable, started after
#     a write on the primary returned, picks a time whose read on the
#     standby sees it; serializable picks a replayed time; explain works;
#     with the primary gone, strict fails clearly and serializable still
#     answers;
#  5. the rest of the API refuses with 25006 on the standby;
#  6. check_consistency() is clean on the primary and on the standby, and
#     the standby's finds a defect planted on the primary (a history row
#     above every time handed out, which the relation lacks) once replayed.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = mzcoord_node('primary', allows_streaming => 1,
	create_extension => 1);
$primary->safe_psql('postgres', q{
	CREATE TABLE sr (k int, v text);
	INSERT INTO sr SELECT g, 'v' || g FROM generate_series(1, 5) g;
	SELECT mzcoord.create_table('sr', '1 hour');
	SELECT mzcoord.create_materialized_view('srv',
		'SELECT count(*) AS n, sum(k) AS total FROM sr', '1 hour');
});
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "hot_standby_feedback = on\n");
$standby->start;

my $table_sql = q{SELECT coalesce(string_agg(k || ':' || v, ' ' ORDER BY k, v), '')
	FROM mzcoord.read_at(NULL::sr, %s)};
my $scan_sql = q{SELECT count(*) || '/' || coalesce(sum(k), 0) FROM mzcoord.read_at(NULL::sr, %s) r
	WHERE r.v LIKE 'v%%'};
my $view_sql = q{SELECT n || '/' || total FROM mzcoord.read_at(NULL::srv, %s)};
my $changes_sql = q{SELECT string_agg(c.mz_timestamp || ':' || c.mz_diff || ':' || (c.row).k || ':' || (c.row).v,
	' ' ORDER BY c.mz_timestamp, c.mz_diff, (c.row).k, (c.row).v) FROM mzcoord.changes(NULL::sr, %s, %s) c};
my $view_changes_sql = q{SELECT string_agg(c.mz_timestamp || ':' || c.mz_diff || ':' || (c.row).n,
	' ' ORDER BY c.mz_timestamp, c.mz_diff) FROM mzcoord.changes(NULL::srv, %s, %s) c};

# ---------------------------------------------------------------------------
# 1. Several times, same answers
# ---------------------------------------------------------------------------
my @writes = (
	q{UPDATE sr SET v = v || '+' WHERE k <= 2},
	q{DELETE FROM sr WHERE k = 5; INSERT INTO sr VALUES (6, 'six'), (6, 'six')},
	q{UPDATE sr SET k = k + 10 WHERE k = 1},
	q{DELETE FROM sr WHERE k > 3});
my @times;
foreach my $w (@writes)
{
	push @times, $primary->safe_psql('postgres',
		"BEGIN; $w; COMMIT; SELECT mzcoord.last_commit_ts();");
}
my %want;
foreach my $t (@times, map { $_ - 1 } @times)
{
	$want{$t} = [map { $primary->safe_psql('postgres', sprintf($_, $t)) }
		  ($table_sql, $scan_sql, $view_sql)];
}
$primary->wait_for_catchup($standby);
foreach my $t (sort keys %want)
{
	my @got = map { $standby->safe_psql('postgres',
			"SET statement_timeout = '60s';\n" . sprintf($_, $t)) }
	  ($table_sql, $scan_sql, $view_sql);
	is_deeply(\@got, $want{$t}, "standby reads at $t equal the primary's ($want{$t}[0])");
}

foreach my $q ($changes_sql, $view_changes_sql)
{
	my $sql = sprintf($q, $times[0] - 1, $times[-1]);
	my $want = $primary->safe_psql('postgres', $sql);
	isnt($want, '', 'the primary has changes between the first and the last time');
	is($standby->safe_psql('postgres', "SET statement_timeout = '60s';\n$sql"),
		$want, 'changes on the standby equal the primary\'s');
}

# ---------------------------------------------------------------------------
# 2. A read at a time the standby has not replayed yet waits for it
# ---------------------------------------------------------------------------
my $t_new = $primary->safe_psql('postgres', q{
	INSERT INTO sr VALUES (7, 'seven');
	SELECT mzcoord.last_commit_ts();});
is($standby->safe_psql('postgres', "SET statement_timeout = '60s';\n"
	  . "SELECT count(*) FROM mzcoord.read_at(NULL::sr, $t_new) WHERE k = 7"),
	'1', 'a standby read at a time the primary just handed out sees its write');

# ---------------------------------------------------------------------------
# 3. Compacted on the primary: refused on the standby
# ---------------------------------------------------------------------------
my $t_old = $times[0];
$primary->safe_psql('postgres',
	q{SELECT mzcoord.set_retain_history('sr', '1 second')});
$primary->poll_query_until('postgres', qq{
	SELECT s.compacted > $t_old FROM mzcoord.storage s
	 WHERE s.relation = 'sr'::regclass})
  or die 'the primary never compacted past the first time';
$primary->wait_for_catchup($standby);
my ($ret, $out, $err) = $standby->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT count(*) FROM mzcoord.read_at(NULL::sr, $t_old)");
like($err, qr/55000: timestamp $t_old is not valid for all inputs/,
	'a standby read below the replayed bound is refused with 55000');
($ret, $out, $err) = $standby->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT count(*) FROM mzcoord.changes(NULL::sr, $t_old, $t_new)");
like($err, qr/55000: timestamp $t_old is not valid for all inputs/,
	'changes on the standby after a time below the replayed bound are refused with 55000');
# With one second of history the bound moves on all the time: a lease on the
# primary keeps it at a time the standby then reads, however slow the
# machine is.
my $t_lease = $primary->safe_psql('postgres',
	q{SELECT mzcoord.create_lease('fresh', ARRAY['sr'::regclass])});
my $t_read = $t_lease > $t_new ? $t_lease : $t_new;
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', "SET statement_timeout = '60s';\n"
	  . "SELECT count(*) FROM mzcoord.read_at(NULL::sr, $t_read) WHERE k = 7"),
	'1', 'a read above the bound still answers');
$primary->safe_psql('postgres', q{SELECT mzcoord.drop_lease('fresh')});

# ---------------------------------------------------------------------------
# 4. Timestamp selection on the standby
# ---------------------------------------------------------------------------
foreach my $round (1 .. 3)
{
	my $t_w = $primary->safe_psql('postgres', qq{
		INSERT INTO sr VALUES (100 + $round, 'strict');
		SELECT mzcoord.last_commit_ts();});
	# Started after the write returned: strict serializable must see it.
	# The reads at that time follow in the same session, which learnt the
	# view's upper from the primary (the view is idle since its refresh);
	# a first strict read in the session leaves the connection it reuses.
	my ($t_s, $seen, $view) = split /\|/, $standby->safe_psql('postgres', qq{
		SET statement_timeout = '60s';
		SELECT mzcoord.select_timestamp(ARRAY['sr'::regclass]) AS t0 \\gset
		SELECT mzcoord.select_timestamp(ARRAY['sr'::regclass, 'srv'::regclass]) AS t \\gset
		SELECT :t || '|' || (SELECT count(*) FROM mzcoord.read_at(NULL::sr, :t) WHERE k = 100 + $round)
		       || '|' || (SELECT n || '/' || total FROM mzcoord.read_at(NULL::srv, :t));});
	cmp_ok($t_s, '>=', $t_w, "round $round: the strict time on the standby is at or after the write");
	is($seen, '1', "round $round: a standby read at the strict time sees the write");
	is($view, $primary->safe_psql('postgres', sprintf($view_sql, $t_s)),
		"round $round: the view at the strict time reads as on the primary ($view)");
}
my $t_ser = $standby->safe_psql('postgres',
	q{SELECT mzcoord.select_timestamp(ARRAY['sr'::regclass], 'serializable')});
is($standby->safe_psql('postgres', sprintf($table_sql, $t_ser)),
	$primary->safe_psql('postgres', sprintf($table_sql, $t_ser)),
	'a serializable time on the standby reads as on the primary');
like($standby->safe_psql('postgres',
		q{SELECT mzcoord.explain_timestamp(ARRAY['sr'::regclass], 'serializable')}),
	qr/query timestamp: \d+/, 'explain_timestamp works on the standby');
($ret, $out, $err) = $standby->psql('postgres', "\\set VERBOSITY verbose\n"
	  . "SELECT mzcoord.select_timestamp(ARRAY['sr'::regclass], 'serializable', $t_old)");
like($err, qr/55000: timestamp $t_old is not valid for all inputs/,
	'select_timestamp as of a compacted time is refused on the standby');

# ---------------------------------------------------------------------------
# 5. The rest of the API is refused as in a read-only transaction
# ---------------------------------------------------------------------------
foreach my $call (
	q{SELECT mzcoord.acquire_read_hold(ARRAY['sr'::regclass])},
	q{SELECT mzcoord.create_lease('l', ARRAY['sr'::regclass])},
	q{SELECT mzcoord.set_retain_history('sr', '1 day')},
	q{INSERT INTO sr VALUES (8, 'eight')})
{
	($ret, $out, $err) = $standby->psql('postgres',
		"\\set VERBOSITY verbose\n$call");
	like($err, qr/ERROR:  25006/, "refused with 25006 on the standby: $call");
}

# ---------------------------------------------------------------------------
# 6. check_consistency() on both sides
# ---------------------------------------------------------------------------
is($primary->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency() is clean on the primary');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency() is clean on the standby');

# A defect made on the primary by hand is found on the standby from what it
# replayed: a history row far above the ceiling, which the table lacks.
my $hist = $primary->safe_psql('postgres',
	q{SELECT history::regclass FROM mzcoord.storage WHERE relation = 'sr'::regclass});
$primary->safe_psql('postgres',
	"INSERT INTO $hist SELECT 99, 'planted', 4000000000000, 1");
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', q{
	SELECT string_agg(check_name, ', ' ORDER BY check_name)
	  FROM mzcoord.check_consistency()}),
	'history above the ceiling, relation differs from its history',
	'check_consistency() on the standby finds the planted history row');
$primary->safe_psql('postgres',
	"DELETE FROM $hist WHERE ts = 4000000000000");
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency() on the standby is clean again once it is removed');

# Without the primary, strict serializable says why it cannot answer.
$primary->stop;
($ret, $out, $err) = $standby->psql('postgres', "\\set VERBOSITY verbose\n"
	  . q{SELECT mzcoord.select_timestamp(ARRAY['sr'::regclass])});
like($err, qr/08006: a strict serializable read on a standby could not (connect to the primary|get the primary's read timestamp)/,
	'strict serializable on the standby without the primary fails with 08006');
like($standby->safe_psql('postgres',
		q{SELECT mzcoord.select_timestamp(ARRAY['sr'::regclass], 'serializable')}),
	qr/^\d+$/, 'serializable still answers on the standby');
$standby->stop;
done_testing();
