# Linearizability of strict serializable reads, checked against real time.
#
# Real concurrent sessions: the test forks processes, each driving its own
# long-lived psql.  Nothing is checked against timestamps the system reports;
# the expectations come from what the processes sent and from the wall clock
# (Time::HiRes, one clock for every process):
#
# - writers (one per registered table w1, w2, w3, so each table's history is
#   one sequence of commits): READ COMMITTED transactions of 1-4 random
#   INSERT / UPDATE / DELETE statements plus one that sets the version row
#   ('v', k) to the writer's commit counter k, some of them retracting rows
#   in a later statement, some rolled back, some left open and idle for a
#   moment.  The writer computes the table's full contents after each commit
#   k itself (the model).  Right after each COMMIT returns, the writer starts
#   a new transaction, chooses a strict serializable time for its own table
#   and reads it there: it must see its own commit.
# - storm processes: bursts of many small transactions into the shared
#   tables `storm` and `storm2`, sent to psql in batches (several writes per
#   millisecond, so the oracle runs ahead of the clock and transactions
#   share timestamps: group commits).  Each transaction writes 1-4 rows of
#   `storm` tagged with its id and the number of rows it leaves: one INSERT;
#   or INSERT then UPDATE (or DELETE) of its rows in a later statement,
#   sometimes slowly (pg_sleep), so that it sees later writes and moves to a
#   later timestamp; or rows in `storm` plus one row in `storm2`.  A read
#   must show every transaction whole (all its final rows, no intermediate
#   state, in both tables or in neither) and, per storm process, a prefix of
#   its committed transactions.
# - readers: BEGIN; select_timestamp(tables, 'strict serializable'); read_at
#   every table at that time; some keep the transaction open (holding the
#   time) while others write and compact, then read the same time again;
#   some read a time read shortly before again, in a new transaction
#   (select_timestamp with as_of).
# - a compactor: mzcoord.compact() now and then, and retain history changed
#   between 1 s (the minimum) and 2 s, while the coordinator compacts (tick 50 ms).
#
# Every process logs wall-clock times: when each commit RETURNED, when each
# read STARTED (before select_timestamp was sent) and returned.  After the
# run the test checks:
#   - contents: a read of wN shows exactly the model's contents for the
#     version it shows (so no torn, uncommitted or rolled back state);
#   - real time: a read that started after commit k returned shows version
#     >= k (storm: every transaction whose batch returned before the read
#     started);
#   - own commit: the same, for the writer's read right after its commit;
#   - monotonic: a read that started after another read returned shows, per
#     table, at least the versions that read showed;
#   - whole transactions and prefixes on `storm`;
#   - a re-read of a held time equals the first read of that time, and
#     every read of one time (any process, any kind) shows the same;
#   - no unexpected errors, and mzcoord.check_consistency() is empty.
# Timing is never asserted (slow reads are only reported).
#
# MZCOORD_LIN_SECONDS (default 60) bounds the run; MZCOORD_LIN_SEED (default
# random) seeds every process's choices and is always printed.  Exact
# interleavings depend on timing, so a seed reproduces the workload, not the
# schedule.  Per-process logs stay in tmp_check/log/lin_*.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run ();
use POSIX ();
use Time::HiRes ();

my $seconds = $ENV{MZCOORD_LIN_SECONDS} // 60;
my $seed = $ENV{MZCOORD_LIN_SEED} // (int(rand(1_000_000_000)) ^ $$);
# Process counts (for experiments; the defaults are what the test is for).
my $nwriters = $ENV{MZCOORD_LIN_WRITERS} // 3;
my $nstorms = $ENV{MZCOORD_LIN_STORMS} // 2;
my $nreaders = $ENV{MZCOORD_LIN_READERS} // 2;
diag("linearizability test: seed $seed, $seconds s, $nwriters writers, "
	  . "$nstorms storm processes, $nreaders readers "
	  . "(rerun with MZCOORD_LIN_SEED=$seed MZCOORD_LIN_SECONDS=$seconds)");

my $node = mzcoord_node('linearizable', create_extension => 1,
	conf => "max_connections = 40\n");

my @wtables = map { "w$_" } 1 .. $nwriters;
my %initial;    # table => contents at version 0
foreach my $t (@wtables)
{
	$node->safe_psql('postgres', qq{
		CREATE TABLE $t (k text NOT NULL, val int NOT NULL);
		INSERT INTO $t VALUES ('v', 0), ('r0', 0);
		SELECT mzcoord.create_table('$t', '1 second');
	});
	$initial{$t} = contents_string([ [ 'v', 0 ], [ 'r0', 0 ] ]);
}
$node->safe_psql('postgres', q{
	CREATE TABLE storm (p int NOT NULL, j int NOT NULL, i int NOT NULL,
						n int NOT NULL, state text NOT NULL);
	CREATE INDEX storm_pj ON storm (p, j);
	SELECT mzcoord.create_table('storm', '1 second');
	CREATE TABLE storm2 (p int NOT NULL, j int NOT NULL);
	SELECT mzcoord.create_table('storm2', '1 second');
});
my @all_tables = (@wtables, 'storm');

my $logdir = "$PostgreSQL::Test::Utils::log_path/lin_$$";
mkdir $logdir or die "mkdir $logdir: $!";
note("process logs in $logdir");

# ---------------------------------------------------------------------------
# Helpers shared by the processes
# ---------------------------------------------------------------------------
sub now { return Time::HiRes::time(); }
sub fmt_t { return sprintf('%.6f', $_[0]); }

# A table's contents as one comparable string: rows "k|val", sorted.
sub contents_string
{
	my ($rows) = @_;
	return join(',', sort map { "$_->[0]|$_->[1]" } @$rows);
}

sub output_string
{
	my ($out) = @_;
	return join(',', sort grep { $_ ne '' } split /\n/, $out // '');
}

# A minimal psql driver (no TAP output from the children): one long-lived
# psql per process, a query is sent and its output collected up to a
# separator echoed on stdout and stderr.
my $query_timeout = $PostgreSQL::Test::Utils::timeout_default;

sub psql_open
{
	my $s = { in => '', out => '', err => '', n => 0 };
	$s->{timer} = IPC::Run::timeout($query_timeout);
	$s->{h} = IPC::Run::start(
		[ $node->installed_command('psql'), '-XAtq', '-v', 'ON_ERROR_STOP=0',
			'-d', $node->connstr('postgres'), '-f', '-' ],
		'<', \$s->{in}, '>', \$s->{out}, '2>', \$s->{err}, $s->{timer});
	psql_safe($s, 'SET client_min_messages = error');
	return $s;
}

# Returns (output, error text or '').
sub psql_query
{
	my ($s, $sql) = @_;
	my $n = ++$s->{n};
	my $sep = "__lin_sep_$n:";
	$s->{timer}->start($query_timeout);
	$s->{in} .= "$sql\n;\n\\echo '$sep'\n\\warn '$sep'\n";
	$s->{h}->pump
	  until ($s->{out} =~ /\Q$sep\E\r?\n/ && $s->{err} =~ /\Q$sep\E\r?\n/)
	  || $s->{timer}->is_expired;
	die "psql query timed out after $query_timeout s: $sql\n"
	  if $s->{timer}->is_expired;
	my $out = $s->{out};
	my $err = $s->{err};
	$out =~ s/\r?\n?\Q$sep\E\r?\n//;
	$err =~ s/\r?\n?\Q$sep\E\r?\n//;
	$s->{out} = '';
	$s->{err} = '';
	chomp $out;
	return ($out, $err);
}

sub psql_safe
{
	my ($s, $sql) = @_;
	my ($out, $err) = psql_query($s, $sql);
	die "query failed: $sql\n$err\n" if $err ne '';
	return $out;
}

sub psql_close
{
	my ($s) = @_;
	$s->{in} .= "\\q\n";
	eval { $s->{h}->finish; };
}

sub oneline { my ($x) = @_; $x //= ''; $x =~ s/[\t\n]+/ /g; return $x; }

# ---------------------------------------------------------------------------
# Processes
# ---------------------------------------------------------------------------
my $deadline;
my %children;    # pid => name

sub spawn
{
	my ($name, $body) = @_;
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		# The child: never run the parent's END blocks (they would stop the
		# node) or print TAP; report through the log and the exit code.
		my $rc = 0;
		open(my $log, '>', "$logdir/$name.log") or POSIX::_exit(3);
		$log->autoflush(1);
		eval {
			srand($seed + 7919 * (1 + length($name)) + unpack('%32C*', $name));
			$body->($log);
			1;
		} or do {
			print $log "X\t$name\t" . oneline($@) . "\n";
			$rc = 1;
		};
		close $log;
		POSIX::_exit($rc);
	}
	$children{$pid} = $name;
	return;
}

sub pick { return $_[ int(rand(scalar @_)) ]; }

# A strict serializable read of @tables: logs one R line per table.
#   R kind proc id table t_start t_ret ts contents
# kind: own (a writer's read after its commit), read, reread (of a held
# time; id names the first read).  Returns (ts, {table => contents}) or ()
# on an error (logged as E, the transaction rolled back).
sub storm_digest_sql
{
	my ($ts) = @_;
	return qq{
WITH r AS MATERIALIZED (SELECT * FROM mzcoord.read_at(NULL::storm, $ts)),
r2 AS MATERIALIZED (SELECT * FROM mzcoord.read_at(NULL::storm2, $ts)),
g AS (SELECT p, j, count(*) AS c, max(n) AS n, min(n) AS n0,
			 bool_and(state = 'done') OR bool_and(state = 'pair') AS done,
			 bool_or(state = 'pair') AS pair, count(DISTINCT i) AS di
		FROM r GROUP BY p, j),
bad AS (SELECT p, j, CASE WHEN NOT done THEN 'mixed_states'
							 ELSE c || '_rows_of_' || n END AS why
		  FROM g WHERE c <> n OR n <> n0 OR NOT done OR di <> c
		UNION ALL
		SELECT p, j, 'in_storm_not_storm2' FROM
		  ((SELECT p, j FROM g WHERE pair) EXCEPT ALL (SELECT p, j FROM r2)) x
		UNION ALL
		SELECT p, j, 'in_storm2_not_storm' FROM
		  ((SELECT p, j FROM r2) EXCEPT ALL (SELECT p, j FROM g WHERE pair)) y),
gaps AS (SELECT p, coalesce(lag(j) OVER w, 0) + 1 AS g0, j - 1 AS g1
		   FROM g WINDOW w AS (PARTITION BY p ORDER BY j))
SELECT coalesce((SELECT string_agg(p || ':' || mx || ':' || cnt, ';' ORDER BY p)
				   FROM (SELECT p, max(j) AS mx, count(*) AS cnt FROM g GROUP BY p) s), '-')
	|| ' ' || (SELECT count(*) FROM bad)
	|| ' ' || coalesce((SELECT string_agg(p || '.' || j || ':' || why, ';')
						  FROM (SELECT * FROM bad ORDER BY p, j LIMIT 5) x), '-')
	|| ' ' || (SELECT md5(coalesce(string_agg(concat_ws('/', p, j, i, n, state), ','
							ORDER BY p, j, i, n, state), '')) FROM r)
	|| (SELECT md5(coalesce(string_agg(p || '/' || j, ',' ORDER BY p, j), '')) FROM r2)
	|| ' ' || coalesce((SELECT string_agg(p || ':' || g0 || '-' || g1, ';')
						  FROM (SELECT * FROM gaps WHERE g1 >= g0 ORDER BY p, g0 LIMIT 5) x), '-')};
}

sub read_table
{
	my ($s, $table, $ts) = @_;
	if ($table eq 'storm')
	{
		return psql_query($s, storm_digest_sql($ts));
	}
	my ($out, $err) =
	  psql_query($s, "SELECT k, val FROM mzcoord.read_at(NULL::$table, $ts)");
	return (output_string($out), $err);
}

sub strict_read
{
	my ($s, $log, $kind, $proc, $id, @tables) = @_;
	return timed_read($s, $log, $kind, $proc, $id, undef, @tables);
}

# With $as_of: a read of that earlier time (kind asof); a time that is no
# longer valid (below a since) is expected now and then, logged as B.
sub timed_read
{
	my ($s, $log, $kind, $proc, $id, $as_of, @tables) = @_;
	psql_safe($s, 'BEGIN');
	my $t_start = now();
	my ($ts, $err) = psql_query($s,
		'SELECT mzcoord.select_timestamp(ARRAY['
		  . join(', ', map { $_ eq 'storm' ? "'storm', 'storm2'" : "'$_'" } @tables)
		  . "]::regclass[], 'strict serializable'"
		  . (defined $as_of ? ", as_of => $as_of" : '') . ')');
	my $t_sel = now();
	if ($err ne '')
	{
		if (defined $as_of && $err =~ /is not valid for all inputs/)
		{
			print $log "B\t$proc\t$as_of\n";
		}
		else
		{
			print $log "E\t$proc\tselect_timestamp\t" . oneline($err) . "\n";
		}
		psql_query($s, 'ROLLBACK');
		return ();
	}
	print $log "T\t$proc\t" . fmt_t($t_sel - $t_start) . "\n" unless defined $as_of;
	my %got;
	foreach my $t (@tables)
	{
		my ($c, $rerr) = read_table($s, $t, $ts);
		my $t_ret = now();
		if ($rerr ne '')
		{
			print $log "E\t$proc\tread_at $t $ts\t" . oneline($rerr) . "\n";
			psql_query($s, 'ROLLBACK');
			return ();
		}
		$got{$t} = $c;
		print $log join("\t", 'R', $kind, $proc, $id, $t, fmt_t($t_start),
			fmt_t($t_ret), $ts, $c) . "\n";
	}
	return ($ts, \%got);
}

# --- writer of table $t ----------------------------------------------------
sub writer
{
	my ($t, $log) = @_;
	my $s = psql_open();
	my @model = ([ 'v', 0 ], [ 'r0', 0 ]);
	my $k = 0;
	my $nread = 0;
	while (now() < $deadline)
	{
		my @rows = map { [@$_] } @model;
		my @stmts;
		my $nops = 1 + int(rand(3));
		my $pattern = rand();
		if ($pattern < 0.25)
		{
			# insert, then retract it in a later statement
			my $key = 'r' . int(rand(5));
			my ($a, $b) = (int(rand(100)), int(rand(100)));
			push @stmts, "INSERT INTO $t VALUES ('$key', $a)";
			push @rows, [ $key, $a ];
			if (rand() < 0.5)
			{
				push @stmts, "UPDATE $t SET val = $b WHERE k = '$key'";
				$_->[1] = $b foreach grep { $_->[0] eq $key } @rows;
			}
			else
			{
				push @stmts, "DELETE FROM $t WHERE k = '$key'";
				@rows = grep { $_->[0] ne $key } @rows;
			}
			$nops = 0;
		}
		for (1 .. $nops)
		{
			my $key = 'r' . int(rand(5));
			my $r = rand();
			if ($r < 0.45)
			{
				my @vals = map { [ 'r' . int(rand(5)), int(rand(100)) ] } 1 .. 1 + int(rand(2));
				push @stmts, "INSERT INTO $t VALUES "
				  . join(', ', map { "('$_->[0]', $_->[1])" } @vals);
				push @rows, @vals;
			}
			elsif ($r < 0.75)
			{
				my $b = int(rand(100));
				push @stmts, "UPDATE $t SET val = $b WHERE k = '$key'";
				$_->[1] = $b foreach grep { $_->[0] eq $key } @rows;
			}
			else
			{
				push @stmts, "DELETE FROM $t WHERE k = '$key'";
				@rows = grep { $_->[0] ne $key } @rows;
			}
		}
		# The version update (a retraction), at a random position.
		my $pos = int(rand(@stmts + 1));
		splice(@stmts, $pos, 0, "UPDATE $t SET val = " . ($k + 1) . " WHERE k = 'v'");
		$_->[1] = $k + 1 foreach grep { $_->[0] eq 'v' } @rows;

		my $rollback = rand() < 0.08;
		my $idle = rand() < 0.05 ? 0.05 + rand(0.25) : 0;
		psql_safe($s, 'BEGIN');
		my $err = '';
		for my $i (0 .. $#stmts)
		{
			(undef, $err) = psql_query($s, $stmts[$i]);
			last if $err ne '';
			if ($i == 0 && $idle)
			{
				print $log "I\t$t\t" . fmt_t($idle) . "\n";
				Time::HiRes::sleep($idle);
			}
		}
		if ($err ne '')
		{
			print $log "E\t$t\twrite\t" . oneline($err) . "\n";
			psql_query($s, 'ROLLBACK');
			next;
		}
		if ($rollback)
		{
			psql_safe($s, 'ROLLBACK');
			print $log "A\t$t\n";
			next;
		}
		my $t_begin = now();
		(undef, $err) = psql_query($s, 'COMMIT');
		my $t_ret = now();
		if ($err ne '')
		{
			# PostgreSQL rolls back a transaction whose COMMIT fails.
			print $log "E\t$t\tcommit\t" . oneline($err) . "\n";
			next;
		}
		$k++;
		@model = @rows;
		print $log join("\t", 'C', $t, $k, fmt_t($t_begin), fmt_t($t_ret),
			contents_string(\@model)) . "\n";

		# Read one's own write, in a new transaction.
		if (strict_read($s, $log, 'own', $t, ++$nread, $t))
		{
			psql_query($s, 'COMMIT');
		}
	}
	psql_close($s);
}

# --- storm process $p -------------------------------------------------------
sub storm
{
	my ($p, $log) = @_;
	my $s = psql_open();
	my $j = 0;
	while (now() < $deadline)
	{
		my $batch = 20 + int(rand(80));
		my $first = $j + 1;
		my @sql;
		for (1 .. $batch)
		{
			$j++;
			my $m = 1 + int(rand(4));
			my $r = rand();
			my @slow = rand() < 0.2 ? (sprintf('SELECT pg_sleep(%.3f);', 0.005 + rand(0.035))) : ();
			if ($r < 0.45)
			{
				# one autocommit INSERT of m rows
				push @sql, "INSERT INTO storm VALUES "
				  . join(', ', map { "($p, $j, $_, $m, 'done')" } 1 .. $m) . ';';
			}
			elsif ($r < 0.7)
			{
				# insert pending rows, then update them in a later statement
				# (sometimes slowly: others write meanwhile, so the update
				# sees later writes and the transaction moves to a later
				# timestamp)
				push @sql, 'BEGIN;',
				  "INSERT INTO storm VALUES "
				  . join(', ', map { "($p, $j, $_, $m, 'pending')" } 1 .. $m) . ';',
				  (rand() < 0.3 ? sprintf('SELECT pg_sleep(%.3f);', 0.001 + rand(0.02)) : ()),
				  "UPDATE storm SET state = 'done' WHERE p = $p AND j = $j;",
				  @slow, 'COMMIT;';
			}
			elsif ($r < 0.85)
			{
				# insert one row too many, then delete it in a later statement
				my $x = $m + 1;
				push @sql, 'BEGIN;',
				  "INSERT INTO storm VALUES "
				  . join(', ', map { "($p, $j, $_, $m, 'done')" } 1 .. $x) . ';',
				  "DELETE FROM storm WHERE p = $p AND j = $j AND i = $x;",
				  @slow, 'COMMIT;';
			}
			else
			{
				# a transaction over two tables: rows 'pair' in storm, one
				# row in storm2; a read shows both or neither
				push @sql, 'BEGIN;',
				  "INSERT INTO storm VALUES "
				  . join(', ', map { "($p, $j, $_, $m, 'pair')" } 1 .. $m) . ';',
				  "INSERT INTO storm2 VALUES ($p, $j);",
				  'COMMIT;';
			}
		}
		my ($out, $err) = psql_query($s, join("\n", @sql));
		my $t_ret = now();
		if ($err ne '')
		{
			print $log "E\t$p\tstorm\t" . oneline($err) . "\n";
			# Which transactions of the batch did not commit?
			my %have = map { $_ => 1 } split /\n/, psql_safe($s,
				"SELECT DISTINCT j FROM storm WHERE p = $p AND j BETWEEN $first AND $j");
			foreach my $x ($first .. $j)
			{
				print $log "F\t$p\t$x\n" unless $have{$x};
			}
		}
		print $log "S\t$p\t$first\t$j\t" . fmt_t($t_ret) . "\n";
		Time::HiRes::sleep(rand(0.3));
	}
	psql_close($s);
}

# --- reader $r --------------------------------------------------------------
sub reader
{
	my ($r, $log) = @_;
	my $s = psql_open();
	my $id = 0;
	my @recent;    # [ts, when read]
	while (now() < $deadline)
	{
		my @tables = grep { rand() < 0.6 } @all_tables;
		@tables = (pick(@all_tables)) unless @tables;
		$id++;
		@recent = grep { $_->[1] > now() - 0.8 } @recent;
		if (@recent && rand() < 0.3)
		{
			# Read an earlier time again, now in a transaction of its own:
			# it must show what every other read of that time showed.
			my $at = pick(@recent)->[0];
			psql_query($s, 'COMMIT')
			  if timed_read($s, $log, 'asof', "reader$r", $id, $at, @tables);
			next;
		}
		my ($ts, $got) = strict_read($s, $log, 'read', "reader$r", $id, @tables);
		next unless defined $ts;
		push @recent, [ $ts, now() ];
		if (rand() < 0.3)
		{
			# Hold the time while others write and compact, then again.
			Time::HiRes::sleep(rand() < 0.5 ? 0.01 + rand(0.1) : 0.2 + rand(1.3));
			foreach my $t (@tables)
			{
				my ($c, $err) = read_table($s, $t, $ts);
				if ($err ne '')
				{
					print $log "E\treader$r\tre-read $t $ts\t" . oneline($err) . "\n";
					last;
				}
				print $log join("\t", 'R', 'reread', "reader$r", $id, $t, '-', '-',
					$ts, $c) . "\n";
			}
		}
		psql_query($s, 'COMMIT');
		Time::HiRes::sleep(rand(0.05));
	}
	psql_close($s);
}

# --- compactor --------------------------------------------------------------
sub compactor
{
	my ($log) = @_;
	my $s = psql_open();
	while (now() < $deadline)
	{
		Time::HiRes::sleep(0.2 + rand(0.3));
		my $t = pick(@all_tables, 'storm2');
		my ($out, $err) = psql_query($s, "SELECT compacted FROM mzcoord.compact('$t')");
		print $log ($err eq '' ? "K\t$t\t$out\n" : "E\tcompactor\tcompact $t\t" . oneline($err) . "\n");
		if (rand() < 0.1)
		{
			my $t2 = pick(@all_tables, 'storm2');
			my $rh = pick('1 second', '1 second', '2 seconds');
			(undef, $err) = psql_query($s,
				"SELECT mzcoord.set_retain_history('$t2', '$rh')");
			print $log ($err eq '' ? "H\t$t2\t$rh\n"
				: "E\tcompactor\tretain history $t2\t" . oneline($err) . "\n");
		}
	}
	psql_close($s);
}

# The history relation of storm, for the group commit sample.
my $storm_history = $node->safe_psql('postgres',
	q{SELECT history FROM mzcoord.storage WHERE relation = 'storm'::regclass});
note("storm history: $storm_history");

sub group_sampler
{
	my ($log) = @_;
	my $s = psql_open();
	while (now() < $deadline)
	{
		Time::HiRes::sleep(0.5 + rand(0.5));
		my ($out, $err) = psql_query($s, qq{
			SELECT count(*) FROM (
				SELECT ts FROM $storm_history
				 WHERE ts > (SELECT compacted FROM mzcoord.storage
							  WHERE relation = 'storm'::regclass)
				 GROUP BY ts HAVING count(DISTINCT (c1, c2)) > 1) x});
		print $log "G\t$out\n" if $err eq '';
	}
	psql_close($s);
}

$deadline = now() + $seconds;
my $t0 = now();
foreach my $t (@wtables)
{
	spawn("writer_$t", sub { writer($t, $_[0]) });
}
foreach my $p (1 .. $nstorms)
{
	spawn("storm_$p", sub { storm($p, $_[0]) });
}
foreach my $r (1 .. $nreaders)
{
	spawn("reader_$r", sub { reader($r, $_[0]) });
}
spawn('compactor', sub { compactor($_[0]) });
spawn('groups', sub { group_sampler($_[0]) });

# Wait for every process; they stop by themselves at the deadline (plus the
# statement they are running).  A process still running long after that is
# stuck: ended by its pid and reported.
my $hard = $deadline + 2 * $query_timeout;
my %exit;
while (%children)
{
	my $pid = waitpid(-1, POSIX::WNOHANG());
	if ($pid > 0)
	{
		$exit{ $children{$pid} } = $? >> 8 if exists $children{$pid};
		delete $children{$pid};
		next;
	}
	if (now() > $hard)
	{
		foreach my $pid (keys %children)
		{
			diag("process $children{$pid} still running, ended");
			kill 'KILL', $pid;
			waitpid($pid, 0);
			$exit{ $children{$pid} } = 'killed';
			delete $children{$pid};
		}
		last;
	}
	Time::HiRes::sleep(0.1);
}
diag(sprintf('run took %.1f s', now() - $t0));

# ---------------------------------------------------------------------------
# Analysis
# ---------------------------------------------------------------------------
my %commits;     # table => [ [k, t_ret, contents] ] indexed by k
my %storm_done;  # p => [ [j_last, t_ret] ] in order
my %storm_failed;    # p => { j => 1 }
my @reads;       # { kind proc id table t_start t_ret ts c }
my %rereads;     # "proc/id/table" => [ reread rows ]
my (@errors, @crashes);
my %stats;
my @select_latency;
my $max_groups = 0;

foreach my $t (@wtables)
{
	$commits{$t} = [ [ 0, 0, $initial{$t} ] ];
}
opendir(my $dh, $logdir) or die;
foreach my $f (sort grep { /\.log$/ } readdir $dh)
{
	open(my $fh, '<', "$logdir/$f") or die "$f: $!";
	while (my $line = <$fh>)
	{
		chomp $line;
		my @f = split /\t/, $line, -1;
		my $tag = shift @f;
		if ($tag eq 'C')
		{
			my ($t, $k, $tb, $tr, $c) = @f;
			die "commit $k of $t out of order" if $k != @{ $commits{$t} };
			push @{ $commits{$t} }, [ $k, $tr, $c ];
			$stats{commits}++;
		}
		elsif ($tag eq 'R')
		{
			my %r;
			@r{qw(kind proc id table t_start t_ret ts c)} = @f;
			if ($r{kind} eq 'reread')
			{
				push @{ $rereads{"$r{proc}/$r{id}/$r{table}"} }, \%r;
				$stats{rereads}++;
			}
			else
			{
				push @reads, \%r;
				$stats{"reads ($r{kind})"}++;
			}
		}
		elsif ($tag eq 'S')
		{
			my ($p, $first, $last, $tr) = @f;
			push @{ $storm_done{$p} }, [ $last, $tr ];
			$stats{'storm transactions'} += $last - $first + 1;
		}
		elsif ($tag eq 'F') { $storm_failed{ $f[0] }{ $f[1] } = 1; $stats{'storm failed'}++; }
		elsif ($tag eq 'E') { push @errors, "$f: " . join(' ', @f); }
		elsif ($tag eq 'X') { push @crashes, "$f: " . join(' ', @f); }
		elsif ($tag eq 'A') { $stats{rollbacks}++; }
		elsif ($tag eq 'B') { $stats{'as-of reads below the since'}++; }
		elsif ($tag eq 'I') { $stats{'idle open writers'}++; }
		elsif ($tag eq 'K') { $stats{'explicit compactions'}++; }
		elsif ($tag eq 'H') { $stats{'retain history changes'}++; }
		elsif ($tag eq 'T') { push @select_latency, $f[1]; }
		elsif ($tag eq 'G') { $max_groups = $f[0] if $f[0] > $max_groups; }
	}
	close $fh;
}
closedir $dh;

my %violations;    # category => [ messages ]
sub violation
{
	my ($cat, $msg) = @_;
	push @{ $violations{$cat} }, $msg;
}

# The last commit (or storm transaction) that returned before time $t.
sub last_returned_before
{
	my ($list, $t, $key) = @_;    # $list sorted by return time
	my ($lo, $hi) = (0, scalar @$list);    # first index with t_ret >= $t
	while ($lo < $hi)
	{
		my $mid = int(($lo + $hi) / 2);
		if ($list->[$mid][1] < $t) { $lo = $mid + 1; }
		else { $hi = $mid; }
	}
	return $lo > 0 ? $list->[ $lo - 1 ] : undef;
}

# What a read shows: for wN the version, for storm per process the largest
# transaction; undef version when the contents are not a committed state.
my %seen;    # read => { version or p => j }
foreach my $r (@reads)
{
	my $t = $r->{table};
	if ($t eq 'storm')
	{
		my ($procs, $nbad, $badlist, $md5, $gaps) = split / /, $r->{c};
		my %mx;
		if ($procs ne '-')
		{
			foreach my $e (split /;/, $procs)
			{
				my ($p, $mxj, $cnt) = split /:/, $e;
				$mx{$p} = $mxj;
				my $failed_below = grep { $_ <= $mxj } keys %{ $storm_failed{$p} // {} };
				violation('storm: not a prefix of a process\'s transactions',
					"storm read by $r->{proc} (read $r->{id}) at ts $r->{ts}, started "
					  . "$r->{t_start}: process $p shows $cnt transactions up to $mxj, "
					  . "expected " . ($mxj - $failed_below)
					  . " (missing, p:from-to: $gaps)")
				  if $cnt != $mxj - $failed_below;
			}
		}
		violation('storm: torn transaction',
			"storm read by $r->{proc} (read $r->{id}) at ts $r->{ts}, started "
			  . "$r->{t_start}: $nbad transactions not whole, e.g. (p.j:what) $badlist")
		  if $nbad > 0;
		$r->{storm} = \%mx;
		next if $r->{kind} eq 'asof';
		foreach my $p (sort keys %storm_done)
		{
			my $need = last_returned_before($storm_done{$p}, $r->{t_start});
			next unless $need;
			my $needj = $need->[0];
			$needj-- while $needj > 0 && $storm_failed{$p}{$needj};
			my $got = $mx{$p} // 0;
			violation('real time: storm read misses a committed transaction',
				"storm read by $r->{proc} (read $r->{id}) started $r->{t_start} at ts "
				  . "$r->{ts}: process $p shows transactions up to $got, but up to "
				  . "$needj had returned (batch returned $need->[1], "
				  . sprintf('%.1f ms', 1000 * ($r->{t_start} - $need->[1]))
				  . ' before the read started)')
			  if $got < $needj;
		}
		next;
	}
	my @vrows = grep { /^v\|/ } split /,/, $r->{c};
	my $ver;
	if (@vrows == 1 && $vrows[0] =~ /^v\|(\d+)$/) { $ver = $1; }
	my $list = $commits{$t};
	if (!defined $ver || $ver >= @$list)
	{
		violation('contents: not a committed state',
			"$t read by $r->{proc} (read $r->{id}, $r->{kind}) started $r->{t_start} at ts "
			  . "$r->{ts}: version rows [@vrows], contents $r->{c}");
		next;
	}
	$r->{ver} = $ver;
	if ($list->[$ver][2] ne $r->{c})
	{
		violation('contents: differ from the model of the version shown',
			"$t read by $r->{proc} (read $r->{id}, $r->{kind}) started $r->{t_start} at ts "
			  . "$r->{ts}: shows version $ver with contents $r->{c}, "
			  . "the model has $list->[$ver][2]");
	}
	next if $r->{kind} eq 'asof';
	my $need = last_returned_before($list, $r->{t_start});
	if ($need && $ver < $need->[0])
	{
		my $cat = $r->{kind} eq 'own'
		  ? 'own commit: a writer\'s read right after its commit misses it'
		  : 'real time: read misses a commit that returned before it started';
		violation($cat,
			"$t read by $r->{proc} (read $r->{id}) started $r->{t_start}, chose ts "
			  . "$r->{ts}: sees version $ver, expected >= $need->[0] (commit "
			  . "$need->[0] returned $need->[1], "
			  . sprintf('%.1f ms', 1000 * ($r->{t_start} - $need->[1]))
			  . ' before the read started)');
	}
}

# Monotonic in real time, per table: a read that started after another
# returned shows at least what that one showed.
foreach my $t (@all_tables)
{
	my @rs = sort { $a->{t_ret} <=> $b->{t_ret} }
	  grep { $_->{table} eq $t && $_->{kind} ne 'asof'
			  && ($t eq 'storm' || defined $_->{ver}) } @reads;
	next unless @rs;
	my @keys = $t eq 'storm' ? (sort keys %storm_done) : ('ver');
	foreach my $key (@keys)
	{
		my $val = sub {
			my ($r) = @_;
			return $t eq 'storm' ? ($r->{storm}{$key} // 0) : $r->{ver};
		};
		# prefix maxima of the value, by return time
		my @pm;
		my $best;
		foreach my $r (@rs)
		{
			$best = $r if !$best || $val->($r) > $val->($best);
			push @pm, [ $r, $r->{t_ret}, $best ];
		}
		foreach my $b (@rs)
		{
			my $e = last_returned_before(\@pm, $b->{t_start});
			next unless $e;
			my $a = $e->[2];
			next unless $val->($b) < $val->($a);
			violation('monotonic: a later read shows less than an earlier one',
				"$t" . ($t eq 'storm' ? " process $key" : '')
				  . ": read $b->{proc}/$b->{id} ($b->{kind}) started $b->{t_start} at ts "
				  . "$b->{ts} shows " . $val->($b) . "; read $a->{proc}/$a->{id} "
				  . "($a->{kind}) returned $a->{t_ret} at ts $a->{ts} showed "
				  . $val->($a));
		}
	}
}

# Re-reads of a held time.
my %first = map { ("$_->{proc}/$_->{id}/$_->{table}" => $_) } grep { $_->{kind} eq 'read' } @reads;
foreach my $key (sort keys %rereads)
{
	my $f = $first{$key};
	foreach my $rr (@{ $rereads{$key} })
	{
		next if $f && $f->{c} eq $rr->{c};
		violation('re-read: a held time changed',
			"$rr->{table} read $key at ts $rr->{ts}: first "
			  . ($f ? "$f->{c} (started $f->{t_start})" : 'read missing')
			  . ", later $rr->{c}");
	}
}

# Every read of one time shows the same, whoever read it and when.
my %by_time;
push @{ $by_time{"$_->{table}\t$_->{ts}"} }, $_ foreach @reads;
foreach my $key (sort keys %by_time)
{
	my @rs = sort { $a->{t_start} <=> $b->{t_start} } @{ $by_time{$key} };
	my %distinct = map { ($_->{c} => 1) } @rs;
	next if keys %distinct < 2;
	my ($t, $ts) = split /\t/, $key;
	violation('same time: reads of one time differ',
		"$t at ts $ts: " . scalar(keys %distinct) . ' different results in '
		  . scalar(@rs) . ' reads: '
		  . join('; ', map { "$_->{proc}/$_->{id} ($_->{kind}, started $_->{t_start}): $_->{c}" } @rs[ 0 .. ($#rs < 3 ? $#rs : 3) ]));
}

# Summary.
@select_latency = sort { $a <=> $b } @select_latency;
my $lat = @select_latency
  ? sprintf('select_timestamp latency: median %.1f ms, p99 %.1f ms, max %.1f ms',
	1000 * $select_latency[ int(@select_latency / 2) ],
	1000 * $select_latency[ int(0.99 * $#select_latency) ],
	1000 * $select_latency[-1])
  : 'no select_timestamp latencies';
diag("seed $seed: " . join(', ', map { "$_: $stats{$_}" } sort keys %stats));
diag("$lat (information only, not checked)");
diag("most storm timestamps shared by several transactions in one sample "
	  . "(group commits, information only): $max_groups");
my $nviol = 0;
$nviol += scalar @{ $violations{$_} } foreach keys %violations;
diag("violations: $nviol"
	  . join('', map { "\n  $_: " . scalar @{ $violations{$_} } } sort keys %violations));
foreach my $cat (sort keys %violations)
{
	my @v = @{ $violations{$cat} };
	diag("--- $cat (" . scalar(@v) . ', first ' . ($#v < 9 ? scalar @v : 10) . ')');
	diag("  $_") foreach @v[ 0 .. ($#v < 9 ? $#v : 9) ];
}

is(scalar @crashes, 0, 'no process failed') or diag(join("\n", @crashes));
is(join(',', map { "$_=$exit{$_}" } grep { $exit{$_} ne '0' } sort keys %exit), '',
	'every process ended by itself');
is(scalar @errors, 0, 'no unexpected errors')
  or diag(join("\n", @errors[ 0 .. ($#errors < 19 ? $#errors : 19) ]));
cmp_ok($stats{commits} // 0, '>', 10, 'writers committed');
cmp_ok(($stats{'reads (read)'} // 0) + ($stats{'reads (own)'} // 0), '>', 10, 'reads were checked');
foreach my $cat (
	'contents: not a committed state',
	'contents: differ from the model of the version shown',
	'own commit: a writer\'s read right after its commit misses it',
	'real time: read misses a commit that returned before it started',
	'real time: storm read misses a committed transaction',
	'monotonic: a later read shows less than an earlier one',
	'storm: torn transaction',
	'storm: not a prefix of a process\'s transactions',
	're-read: a held time changed',
	'same time: reads of one time differ')
{
	is(scalar @{ $violations{$cat} // [] }, 0, "no violations: $cat");
}
foreach my $cat (sort keys %violations)
{
	die "unlisted violation category $cat" unless $cat =~ /^(contents|own|real|monotonic|storm|re-read|same time)/;
}

# Finally, the latest contents, and the system's own invariants.
foreach my $t (@wtables)
{
	my $got = output_string($node->safe_psql('postgres', qq{
		BEGIN;
		SELECT k, val FROM mzcoord.read_at(NULL::$t,
			mzcoord.select_timestamp(ARRAY['$t']::regclass[], 'strict serializable'));
		COMMIT;}));
	is($got, $commits{$t}[-1][2], "$t finally shows its last commit")
	  or diag("seed $seed");
}
is($node->safe_psql('postgres', 'SELECT * FROM mzcoord.check_consistency()'),
	'', 'check_consistency() finds nothing');

diag("seed $seed (rerun with MZCOORD_LIN_SEED=$seed MZCOORD_LIN_SECONDS=$seconds)");
$node->stop;
done_testing();
