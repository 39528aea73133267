# Views keep pace with sustained writers (issue 20): four pgbench clients
# write a view's inputs in single-statement transactions (each commit a
# time of its own) for MZCOORD_KEEP_PACE_SECONDS (default 20) at the
# default one-second tick.  Then:
#   - every view catches up with the last write within 60 coordinator
#     ticks (a refresh step that evaluates at most 32 times per tick needs
#     thousands: it falls behind by about a second every second), and its
#     lag (the table's upper minus the view's) returns below 3 s;
#   - an incremental view equals its query over read_at of its inputs at
#     every time sampled from the run (and the time before it), and is
#     readable at all of them;
#   - a recomputed view (avg of numeric), whose steps evaluate only the last time when more
#     changed (doc/concepts.md), equals its query wherever it is readable,
#     raises 55MZ1 elsewhere, and mzcoord.maintenance_status counts the
#     ranges it did not evaluate;
#   - check_consistency() finds nothing.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run ();

my $seconds = $ENV{MZCOORD_KEEP_PACE_SECONDS} // 20;

my $node = mzcoord_node('keeppace', create_extension => 1,
	conf => "mzcoord.tick_interval = 1000\n");
$node->safe_psql('postgres', q{
	CREATE TABLE w (k int, g int, v int);
	CREATE TABLE d (g int, f int);
	INSERT INTO w SELECT i, i % 8, i % 50 FROM generate_series(1, 300) i;
	INSERT INTO d SELECT g, g + 1 FROM generate_series(0, 7) g;
	SELECT mzcoord.create_table('w', '1 hour');
	SELECT mzcoord.create_table('d', '1 hour');
});

# The views: {w} and {d} stand for the inputs.
my %views = (
	inc_sum => 'SELECT g, count(*) AS n, sum(v) AS s, count(v) AS nv FROM {w} w GROUP BY g',
	inc_join => 'SELECT w.g, count(*) AS n, sum(w.v * d.f) AS s, count(w.v * d.f) AS ns FROM {w} w JOIN {d} d ON d.g = w.g GROUP BY w.g',
	inc_filter => 'SELECT k, g, v FROM {w} w WHERE v % 3 = 0',
	inc_minmax => 'SELECT g, min(v) AS lo, max(v) AS hi, max(k) AS hk FROM {w} w GROUP BY g',
	rec_avg => 'SELECT g, min(v) AS lo, avg(v::numeric) AS a FROM {w} w GROUP BY g',
);
for my $mv (sort keys %views)
{
	(my $q = $views{$mv}) =~ s/\{(\w)\}/$1/g;
	$node->safe_psql('postgres',
		"SELECT mzcoord.create_materialized_view('$mv', \$q\$$q\$q\$, retain_history => '1 hour')");
}
my $t0 = $node->safe_psql('postgres',
	'INSERT INTO w VALUES (0, 0, 0); SELECT mzcoord.last_commit_ts()');

my $script = $node->basedir . '/writes.sql';
PostgreSQL::Test::Utils::append_to_file($script, q{
\set k random(1, 400)
\set g random(0, 7)
\set v random(-50, 50)
\set op random(1, 10)
\if :op <= 3
INSERT INTO w VALUES (:k, :g, :v);
\elif :op <= 6
UPDATE w SET v = :v WHERE k = :k;
\elif :op <= 8
DELETE FROM w WHERE k = :k;
\else
UPDATE d SET f = :v WHERE g = :g;
\endif
});

my $lag_sql = q{
	SELECT string_agg(i.name || '=' || (t.upper - f.upper), ' ' ORDER BY i.name)
	  FROM mzcoord.items i JOIN mzcoord.frontiers f ON f.item_id = i.id,
	       mzcoord.frontiers t JOIN mzcoord.items ti ON ti.id = t.item_id
	 WHERE i.kind = 'materialized_view' AND ti.name = 'w'};
my ($out, $err) = ('', '');
my $bench = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '4', '-j', '4', '-T', $seconds,
		'-f', $script, '-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$out, '2>', \$err);
# The lag while the writers run, for the log (not asserted: no timing).
for (my $s = 0; $s < $seconds; $s += 2)
{
	sleep 2;
	note "lag (ms) at ${s}s: " . $node->safe_psql('postgres', $lag_sql);
	note "steps: " . $node->safe_psql('postgres', q{
		SELECT string_agg(name || ':' || steps || '/' || last_step_ms || 'ms', ' ' ORDER BY name)
		  FROM mzcoord.maintenance_status WHERE kind = 'materialized_view'});
}
ok($bench->finish, 'pgbench ran') or diag $err;
note $out =~ /(number of transactions actually processed: \d+)/ ? $1 : $out;

my $t1 = $node->safe_psql('postgres',
	'INSERT INTO w VALUES (0, 0, 1); SELECT mzcoord.last_commit_ts()');
my $ticks0 = $node->safe_psql('postgres', 'SELECT ticks FROM mzcoord.worker_status()');
ok( $node->poll_query_until(
		'postgres', qq{
	SELECT bool_and(f.upper > $t1)
	  FROM mzcoord.frontiers f JOIN mzcoord.items i ON i.id = f.item_id
	 WHERE i.kind = 'materialized_view'}),
	'every view catches up with the last write');
# Counted in coordinator ticks (one refresh step per view each), not in
# time: a step of at most 32 times needs thousands.
my $ticks = $node->safe_psql('postgres', 'SELECT ticks FROM mzcoord.worker_status()') - $ticks0;
note "caught up in $ticks ticks";
cmp_ok($ticks, '<=', 60, 'the views caught up within 60 ticks of the last write');
ok( $node->poll_query_until(
		'postgres', qq{
	SELECT bool_and(t.upper - f.upper < 3000)
	  FROM mzcoord.items i JOIN mzcoord.frontiers f ON f.item_id = i.id,
	       mzcoord.frontiers t JOIN mzcoord.items ti ON ti.id = t.item_id
	 WHERE i.kind = 'materialized_view' AND ti.name = 'w'}),
	'the lag returns below 3 s once the writes stop');
note 'lag (ms) after: ' . $node->safe_psql('postgres', $lag_sql);

# Every view against its query over read_at of the inputs at sampled
# times of the run and the time before each.
$node->safe_psql('postgres', q{
CREATE FUNCTION check_view(p_name text, q text, times bigint[],
                           OUT mismatches int, OUT unreadable int, OUT checked int)
LANGUAGE plpgsql AS $$
DECLARE
    t bigint;
    n bigint;
    mv text;
    direct text;
BEGIN
    mismatches := 0; unreadable := 0; checked := 0;
    FOREACH t IN ARRAY times LOOP
        mv := format('SELECT * FROM mzcoord.read_at(NULL::%I, %s)', p_name, t);
        direct := replace(replace(q, '{w}', format('mzcoord.read_at(NULL::w, %s)', t)),
                          '{d}', format('mzcoord.read_at(NULL::d, %s)', t));
        BEGIN
            EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) d',
                           mv, direct, direct, mv) INTO n;
            checked := checked + 1;
            IF n > 0 THEN
                mismatches := mismatches + 1;
                RAISE NOTICE '% differs at %', p_name, t;
            END IF;
        EXCEPTION WHEN SQLSTATE '55MZ1' THEN
            unreadable := unreadable + 1;
        END;
    END LOOP;
END
$$;
});
my $times = $node->safe_psql('postgres', qq{
	SELECT array_agg(t ORDER BY t) FROM (
	  SELECT DISTINCT x.t FROM (
	    SELECT ts AS t FROM (SELECT DISTINCT mz_timestamp AS ts
	                           FROM mzcoord.changes(NULL::w, $t0, $t1)
	                         UNION SELECT DISTINCT mz_timestamp
	                           FROM mzcoord.changes(NULL::d, $t0, $t1)) c
	     ORDER BY md5(ts::text) LIMIT 60) s,
	    LATERAL (VALUES (s.t), (s.t - 1)) x(t)) y});
for my $mv (sort keys %views)
{
	my $res = $node->safe_psql('postgres',
		"SELECT mismatches, unreadable, checked FROM check_view('$mv', \$q\$$views{$mv}\$q\$, '$times')");
	my ($mismatches, $unreadable, $checked) = split /\|/, $res;
	note "$mv: $checked times checked, $unreadable unreadable";
	is($mismatches, 0, "$mv equals its query at every readable sampled time");
	if ($mv =~ /^inc_/)
	{
		is($unreadable, 0, "$mv is readable at every sampled time");
	}
}
# The recomputed view evaluates the last time of each step: the time
# before its upper is readable and right.
my $last = $node->safe_psql('postgres', q{
	SELECT f.upper - 1 FROM mzcoord.frontiers f JOIN mzcoord.items i ON i.id = f.item_id
	 WHERE i.name = 'rec_avg'});
is( $node->safe_psql('postgres',
		"SELECT mismatches || '/' || unreadable FROM check_view('rec_avg', \$q\$$views{rec_avg}\$q\$, '{$last}')"),
	'0/0', 'the recomputed view is right at the last time of its last step');
my $status = $node->safe_psql('postgres', q{
	SELECT string_agg(name || ':' || unevaluated_ranges, ' ' ORDER BY name)
	  FROM mzcoord.maintenance_status WHERE kind = 'materialized_view'});
note "unevaluated ranges: $status";
like($status, qr/rec_avg:[1-9]/,
	'maintenance_status shows the ranges the recomputed view skipped');
like($status, qr/inc_filter:0 public.inc_join:0 public.inc_minmax:0 public.inc_sum:0/,
	'the incremental views skipped nothing');
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency finds nothing');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM mzcoord.maintenance_status WHERE failures > 0}),
	'0', 'no step failed');

$node->stop;
done_testing();
