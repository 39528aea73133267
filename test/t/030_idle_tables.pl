# The tick's work follows change (issue 20): thousands of registered tables
# that nobody writes cost no catalog writes, and written tables are
# published at most once per mzcoord.publish_interval.
#
# Every row the coordinator writes to mzcoord.compaction_bounds and
# mzcoord.collections is counted by a trigger the test adds (counted, not
# timed); a table's publication writes its bound only.  Phase 1: 2,000 idle tables over 300 ticks: no row is written.
# Phase 2: 20 of them written every few ticks for about 30 s: each is
# published at most once per interval (plus one), and its bound follows
# the writes (compaction is not starved); the idle ones are still not
# written.  A lease dropped and a new policy go out at the next tick.
# Phase 3: tables with history that only time could compact are not
# visited by every tick.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $ntables = 2000;
my $nbusy = 20;
my $interval_s = 2;

my $node = mzcoord_node('idle', create_extension => 1, conf => qq{
mzcoord.tick_interval = 100
mzcoord.publish_interval = '${interval_s}s'
mzcoord.max_collections = 5000
mzcoord.max_collections_per_role = 5000
max_locks_per_transaction = 256
});

$node->safe_psql('postgres', qq{
DO \$\$ BEGIN
  FOR i IN 1..$ntables LOOP
    EXECUTE format('CREATE TABLE %I (a int)', 'idle' || i);
    PERFORM mzcoord.create_table(('idle' || i)::regclass);
    IF i % 500 = 0 THEN COMMIT; END IF;
  END LOOP;
END \$\$;
CREATE TABLE tables AS
  SELECT i, c.global_id, c.as_of FROM generate_series(1, $ntables) i
    JOIN mzcoord.storage s ON s.relation = ('idle' || i)::regclass
    JOIN mzcoord.collections c ON c.global_id = s.global_id;
});

# Settled: every table's bound has passed its registration, the last thing
# written to it, so nothing above any bound is left to compact.
$node->poll_query_until('postgres', q{
	SELECT bool_and(b.bound > t.as_of + 1)
	  FROM tables t JOIN mzcoord.compaction_bounds b USING (global_id)})
  or die 'the bounds did not pass the registrations';

# Count every row written to the two tables from now on.
$node->safe_psql('postgres', q{
CREATE TABLE written (tab text, global_id text, at timestamptz DEFAULT clock_timestamp());
CREATE FUNCTION count_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.written (tab, global_id) SELECT TG_TABLE_NAME, global_id FROM new_rows;
  RETURN NULL;
END $$;
CREATE TRIGGER count_bounds AFTER UPDATE ON mzcoord.compaction_bounds
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_rows();
CREATE TRIGGER count_collections AFTER UPDATE ON mzcoord.collections
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_rows();
ALTER TABLE mzcoord.compaction_bounds ENABLE ALWAYS TRIGGER count_bounds;
ALTER TABLE mzcoord.collections ENABLE ALWAYS TRIGGER count_collections;
});

sub ticks { return $node->safe_psql('postgres', 'SELECT ticks FROM mzcoord.worker_status()') }

sub wait_ticks
{
	my ($n) = @_;
	my $until = ticks() + $n;
	$node->poll_query_until('postgres', "SELECT ticks >= $until FROM mzcoord.worker_status()")
	  or die "the coordinator did not tick $n times";
}

# Phase 1: nothing written for 300 ticks (30 s at 100 ms, longer on a busy
# machine): the tick writes no row.
wait_ticks(300);
is($node->safe_psql('postgres', 'SELECT count(*) FROM written'), '0',
	"$ntables idle tables: no bound, since or upper written in 300 ticks");

# Phase 2: $nbusy tables written every 5 ticks, 60 times.
my $t0 = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
for my $round (1 .. 60)
{
	$node->safe_psql('postgres',
		join('', map { "INSERT INTO idle$_ VALUES ($round);" } 1 .. $nbusy));
	wait_ticks(5);
}
# Each written table's latest write: the greatest time in its history,
# read right after it (compaction later moves the rows below the since up
# to it).
$node->safe_psql('postgres', qq{
CREATE FUNCTION last_write(rel regclass) RETURNS bigint LANGUAGE plpgsql AS \$\$
DECLARE r bigint;
BEGIN
  EXECUTE format('SELECT max(ts) FROM %s',
                 (SELECT history FROM mzcoord.storage WHERE relation = rel)) INTO r;
  RETURN r;
END \$\$;
CREATE TABLE last_writes AS
  SELECT i, last_write(('idle' || i)::regclass) AS ts FROM generate_series(1, $nbusy) i;
});
my $elapsed = $node->safe_psql('postgres',
	"SELECT extract(epoch FROM clock_timestamp() - '$t0')");
my $allowed = int($elapsed / $interval_s) + 2;
my $most = $node->safe_psql('postgres', qq{
	SELECT coalesce(max(n), 0) FROM (
	  SELECT global_id, count(*) AS n FROM written
	   WHERE tab = 'compaction_bounds' GROUP BY global_id) x});
cmp_ok($most, '<=', $allowed,
	"a written table's bound is published at most once per interval ($most in ${elapsed}s, at most $allowed)");
is($node->safe_psql('postgres', qq{
	SELECT count(*) FROM written w JOIN tables t USING (global_id) WHERE t.i > $nbusy}),
	'0', 'the idle tables are still not written');
# A table's durable since is its bound and its upper the tables' shared
# one: publishing a written table writes its bound row only (catalog 0.6).
is($node->safe_psql('postgres', q{SELECT count(*) FROM written WHERE tab = 'collections'}),
	'0', 'no mzcoord.collections row is written for a table');
cmp_ok($node->safe_psql('postgres', q{SELECT count(*) FROM written WHERE tab = 'compaction_bounds'}),
	'>', 0, 'the written tables\' bounds were published');

# The written tables' bounds follow their writes: compaction is not
# starved by the coalescing.
$node->poll_query_until('postgres', qq{
	SELECT bool_and(b.bound > w.ts)
	  FROM tables t JOIN mzcoord.compaction_bounds b USING (global_id)
	  JOIN last_writes w USING (i)})
  or die 'the written tables were not published past their last write';
pass('the written tables are published past their last write');

# An advance someone waits on is not coalesced: a lease on an idle table
# holds its since; dropped, the bound moves at the next publication, even
# with a long interval.
$node->safe_psql('postgres', q{ALTER SYSTEM SET mzcoord.publish_interval = '1h'});
$node->reload;
wait_ticks(3);
$node->safe_psql('postgres',
	q{SELECT mzcoord.create_lease('pin', ARRAY['idle1500'::regclass], ttl => '1 hour')});
$node->safe_psql('postgres', 'INSERT INTO idle1500 VALUES (1)');
my $after = $node->safe_psql('postgres', q{SELECT last_write('idle1500')});
$node->poll_query_until('postgres', qq{
	SELECT upper - 2000 > $after FROM mzcoord.frontiers WHERE relation = 'idle1500'::regclass})
  or die 'the timeline did not move';
wait_ticks(3);
is($node->safe_psql('postgres', q{
	SELECT since <= held FROM mzcoord.frontiers,
	       (SELECT held_at AS held FROM mzcoord.leases WHERE name = 'pin') l
	 WHERE relation = 'idle1500'::regclass}), 't', 'the lease holds the since');
$node->safe_psql('postgres', q{SELECT mzcoord.drop_lease('pin')});
$node->poll_query_until('postgres', qq{
	SELECT bound > $after FROM mzcoord.compaction_bounds b
	  JOIN tables t USING (global_id) WHERE t.i = 1500})
  or die 'the dropped lease did not release the bound';
pass('a dropped lease releases the bound at the next tick, whatever the interval');

# A new policy goes out at once too, on a table nobody wrote since its
# registration.
my $before = $node->safe_psql('postgres',
	q{SELECT since FROM mzcoord.frontiers WHERE relation = 'idle1600'::regclass});
$node->safe_psql('postgres', q{SELECT mzcoord.set_retain_history('idle1600', '2 seconds')});
$node->poll_query_until('postgres', qq{
	SELECT b.bound > $before FROM mzcoord.compaction_bounds b
	  JOIN tables t USING (global_id) WHERE t.i = 1600})
  or die 'the new policy was not published';
pass('a new policy is published at the next tick, whatever the interval');

# Tables with history above their bound that only time could move past it
# (retain history 30000 days: the since cannot move in our lifetime) are
# not looked at by every tick: each is visited when written, then not
# again until its policy can move its since.  Counted from the tick's
# DEBUG1 line (visited collections per tick).
$node->safe_psql('postgres', q{
DO $$ BEGIN
  FOR i IN 1701..2000 LOOP
    PERFORM mzcoord.set_retain_history(('idle' || i)::regclass, '30000 days');
    EXECUTE format('INSERT INTO %I VALUES (1)', 'idle' || i);
  END LOOP;
END $$;});
wait_ticks(10);
my $log_from = -s $node->logfile;
$node->safe_psql('postgres', q{ALTER SYSTEM SET log_min_messages = debug1});
$node->reload;
wait_ticks(30);
$node->safe_psql('postgres', q{ALTER SYSTEM RESET log_min_messages});
$node->reload;
my @visits = map { /mzcoord tick: visited (\d+) collections/ ? $1 : () }
  split /\n/, slurp_file($node->logfile, $log_from);
cmp_ok(scalar(@visits), '>=', 20, 'the ticks were logged (' . scalar(@visits) . ')');
my $max_visits = 0;
$max_visits = $_ > $max_visits ? $_ : $max_visits for @visits;
cmp_ok($max_visits, '<', 30,
	"300 tables with history only time can compact are not visited every tick (at most $max_visits per tick)");

is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency() finds nothing');

$node->stop;
done_testing();
