# Time across crash restarts (stop('immediate') + start; in scenario 2 a
# SIGKILL of the coordinator right after a commit, which makes the
# postmaster restart the cluster the same way).
#
# After every restart, compared with everything observed before the crash:
# no upper, no since and no oracle read time went back; a new table write
# gets a timestamp above every timestamp and read time seen before (and a
# strict serializable read after it sees it); every read_at answered before
# the crash gives the same rows (or is refused because the since passed it,
# never wrong rows); check_consistency() is clean.
#
# Scenarios:
#  1. the oracle ahead of the clock (strict serializable reads alternating
#     with writes), crashed after a burst and in the middle of bursts;
#  2. a since that moved (retain history shrunk, history compacted, window
#     grown again) on a source and on a table, crashed within a millisecond
#     of the commit that grew the window;
#  3. a source's upper must not drag the table timeline (advance_upper to
#     now + 1 day, restart; then the source dropped, restart), and times at
#     the end of time or far in the future are refused;
#  4. check_consistency() reports history rows above a table's upper
#     (superuser tampering);
#  5. CREATE EXTENSION, CREATE TABLE and mzcoord.create_table() in one psql
#     call (one transaction) on a fresh server and right after a crash
#     restart.
#
# Reads of times that are not complete after a restart (an upper that went
# back) give up after 3 s (statement_timeout) and count as failures; a
# correct system answers them at once.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

my $NOW = q{(extract(epoch FROM clock_timestamp()) * 1000)::bigint};
my $DAY = 86_400_000;
# "Near the clock": a day ahead is a regression of the timeline; a restart
# above a durable oracle ceiling may put tables a few seconds ahead.
my $NEAR = 600_000;
# MZCOORD_CRASH_SCENARIOS=1,3 runs only some scenarios (4 runs with 3).
my %run = map { $_ => 1 } split /,/, ($ENV{MZCOORD_CRASH_SCENARIOS} // '1,2,3,5');

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

# Run SQL (one psql call, statement_timeout set); returns (ok, stdout, stderr).
sub sq
{
	my ($node, $sql, $timeout) = @_;
	$timeout //= '30s';
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET statement_timeout = '$timeout';\n$sql");
	$out //= '';
	$err //= '';
	return ($ret == 0 && $err !~ /ERROR|FATAL/, $out, $err);
}

# Poll until $sql returns 't', at most $secs seconds.
sub poll
{
	my ($node, $sql, $secs) = @_;
	my $deadline = Time::HiRes::time() + $secs;
	while (Time::HiRes::time() < $deadline)
	{
		my ($ok, $out) = sq($node, $sql, '5s');
		return 1 if $ok && $out eq 't';
		Time::HiRes::sleep(0.1);
	}
	return 0;
}

sub max2 { my ($a, $b) = @_; return !defined $a ? $b : !defined $b ? $a : $a > $b ? $a : $b; }

# What the tests saw of one node, to compare with after each restart.
sub new_state
{
	my ($node, %opts) = @_;
	return {
		node => $node,
		since => {}, upper => {}, kind => {},
		read_ts => 0,       # largest oracle read time / strict read time seen
		write_ts => 0,      # largest table write timestamp seen
		reads => [],        # [rel, t, rows]
		marker => $opts{marker},    # a registered table (int first column)
		extra_read_sql => $opts{extra_read_sql},    # durable record of read times
		markers => 0 };
}

sub history_of
{
	my ($node, $rel) = @_;
	my ($ok, $h) = sq($node,
		"SELECT history FROM mzcoord.storage WHERE relation = '$rel'::regclass");
	return $ok ? $h : undef;
}

# Record frontiers, the oracle and the write timestamps now visible.
sub observe
{
	my ($st) = @_;
	my $n = $st->{node};
	my ($ok, $out) = sq($n, q{
		SELECT relation::text, kind, coalesce(since::text, 'null'), coalesce(upper::text, 'null')
		  FROM mzcoord.frontiers WHERE state = 'active'});
	if ($ok)
	{
		foreach my $line (split /\n/, $out)
		{
			my ($rel, $kind, $since, $upper) = split /\|/, $line;
			$st->{kind}{$rel} = $kind;
			foreach (['since', $since], ['upper', $upper])
			{
				my ($k, $v) = @$_;
				my $old = $st->{$k}{$rel};
				$st->{$k}{$rel} =
				  (defined $old && ($old eq 'null' || ($v ne 'null' && $old > $v))) ? $old : $v;
			}
		}
	}
	($ok, $out) = sq($n, q{SELECT oracle_read_ts FROM mzcoord.controller_status()});
	$st->{read_ts} = max2($st->{read_ts}, $out) if $ok && $out ne '';
	($ok, $out) = sq($n, q{
		SELECT mzcoord.select_timestamp(array_agg(relation))
		  FROM mzcoord.frontiers WHERE kind = 'table' AND state = 'active'
		HAVING count(*) > 0});
	$st->{read_ts} = max2($st->{read_ts}, $out) if $ok && $out ne '';
	foreach my $rel (grep { $st->{kind}{$_} eq 'table' } keys %{ $st->{kind} })
	{
		my $h = history_of($n, $rel) or next;
		($ok, $out) = sq($n, "SELECT coalesce(max(ts), 0) FROM $h");
		$st->{write_ts} = max2($st->{write_ts}, $out) if $ok;
	}
	if ($st->{extra_read_sql})
	{
		($ok, $out) = sq($n, $st->{extra_read_sql});
		$st->{read_ts} = max2($st->{read_ts}, $out) if $ok && $out ne '';
	}
}

sub forget
{
	my ($st, $rel) = @_;
	delete $st->{$_}{$rel} for qw(since upper kind);
	$st->{reads} = [ grep { $_->[0] ne $rel } @{ $st->{reads} } ];
}

my $READ = q{
	SELECT CASE WHEN count(*) <= 20
	            THEN coalesce(string_agg(x::text, ' ' ORDER BY x::text), '(none)')
	            ELSE count(*) || ' rows, md5 ' || md5(string_agg(x::text, ',' ORDER BY x::text))
	       END
	  FROM mzcoord.read_at(NULL::%s, %s) x};

# Read rel at t now and remember the answer.
# A time the since has passed by now (on a slow machine, a second of
# retain history goes fast) cannot be read: nothing is remembered then.
sub record_read
{
	my ($st, $rel, $t) = @_;
	my ($ret, $rows, $err) = $st->{node}->psql('postgres', sprintf($READ, $rel, $t));
	if ($ret != 0)
	{
		die "read_at($rel, $t) failed: $err"
		  unless $err =~ /is not valid for all inputs/;
		note("read_at($rel, $t): the since passed it already; not recorded");
		return undef;
	}
	push @{ $st->{reads} }, [ $rel, $t, $rows ];
	return $rows;
}

# Choose the current time of rel (select_timestamp) and read it there, in
# one transaction: the choice holds rel, so a short retain history cannot
# pass the time before the read, however slow the machine.  Remembers the
# answer; returns the time.
sub record_read_now
{
	my ($st, $rel) = @_;
	my ($t, $rows) = split /\n/, $st->{node}->safe_psql('postgres',
		"BEGIN;\n"
		  . "SELECT mzcoord.select_timestamp(ARRAY['$rel'::regclass]) AS now_ts \\gset\n"
		  . "SELECT :now_ts;\n"
		  . sprintf($READ, $rel, ':now_ts') . ";\nCOMMIT;");
	push @{ $st->{reads} }, [ $rel, $t, $rows ];
	return $t;
}

# Everything that must hold after a crash restart.
sub check_restart
{
	my ($st, $label) = @_;
	my $n = $st->{node};

	ok(poll($n, 'SELECT ready FROM mzcoord.controller_status()', 60),
		"$label: the controller is ready after the restart");

	# Frontiers.
	my ($ok, $out, $err) = sq($n, q{
		SELECT relation::text, coalesce(since::text, 'null'), coalesce(upper::text, 'null')
		  FROM mzcoord.frontiers WHERE state = 'active'});
	my %after = map { my ($r, $s, $u) = split /\|/; ($r => [ $s, $u ]) } split /\n/, $out;
	foreach my $rel (sort keys %{ $st->{since} })
	{
		if (!exists $after{$rel})
		{
			fail("$label: $rel is back after the restart");
			next;
		}
		foreach ([ 'since', 0 ], [ 'upper', 1 ])
		{
			my ($k, $i) = @$_;
			my ($seen, $now) = ($st->{$k}{$rel}, $after{$rel}[$i]);
			ok(($seen eq 'null') ? $now eq 'null'
				: ($now eq 'null' || $now >= $seen),
				"$label: $k of $rel did not go back (seen $seen, now $now)");
		}
	}

	# The oracle.
	my $seen_read = $st->{read_ts};
	if ($st->{extra_read_sql})
	{
		my ($ok2, $x) = sq($n, $st->{extra_read_sql});
		$seen_read = max2($seen_read, $x) if $ok2 && $x ne '';
	}
	($ok, $out, $err) = sq($n, 'SELECT oracle_read_ts FROM mzcoord.controller_status()');
	ok($ok && $out ne '' && $out >= $seen_read,
		"$label: the oracle read time did not go back (seen $seen_read, now "
		  . ($ok ? $out : $err) . ')');

	# A new write: after every write and every read time before the crash.
	my $seen_write = $st->{write_ts};
	my @tables = grep { ($st->{kind}{$_} // '') eq 'table' } keys %{ $st->{kind} };
	foreach my $rel (@tables)
	{
		my $h = history_of($n, $rel) or next;
		my ($ok2, $x) = sq($n, "SELECT coalesce(max(ts), 0) FROM $h");
		$seen_write = max2($seen_write, $x) if $ok2;
	}
	my $table_upper = 0;
	$table_upper = max2($table_upper, $st->{upper}{$_})
	  for grep { $st->{upper}{$_} ne 'null' } @tables;
	if (my $m = $st->{marker})
	{
		my $k = -(++$st->{markers});
		my $h = history_of($n, $m);
		($ok, $out, $err) = sq($n, "INSERT INTO $m VALUES ($k);
			SELECT ts FROM $h WHERE c1 = $k");
		if ($ok && $out =~ /^\d+$/)
		{
			my $w = $out;
			cmp_ok($w, '>', $seen_read,
				"$label: a new write is after every read time seen before the crash");
			cmp_ok($w, '>', $seen_write,
				"$label: a new write is after every write before the crash");
			cmp_ok($w, '>=', $table_upper,
				"$label: a new write is at or after the table upper seen before the crash");
			($ok, $out, $err) = sq($n, "SELECT mzcoord.select_timestamp(ARRAY['$m'::regclass])");
			ok($ok && $out >= $w && $out > $seen_read,
				"$label: a strict serializable read after the write reads at or after it "
				  . "(write $w, read " . ($ok ? $out : $err) . ", seen before $seen_read)");
			if ($ok)
			{
				my ($ok3, $c) = sq($n,
					"SELECT count(*) FROM mzcoord.read_at(NULL::$m, $out) x WHERE x::text = '($k)'", '10s');
				is($c, '1', "$label: and sees the new row");
			}
		}
		else
		{
			fail("$label: a new write after the restart: $err");
		}
	}

	# Every read answered before gives the same rows, or is refused because
	# the since passed its time.
	foreach my $r (@{ $st->{reads} })
	{
		my ($rel, $t, $rows) = @$r;
		($ok, $out, $err) = sq($n, sprintf($READ, $rel, $t), '3s');
		if ($ok)
		{
			is($out, $rows, "$label: read_at($rel, $t) gives the rows it gave before the crash");
		}
		elsif ($err =~ /is not valid for all inputs/)
		{
			my ($ok2, $since) = sq($n,
				"SELECT since FROM mzcoord.frontiers WHERE relation = '$rel'::regclass");
			ok($ok2 && $since > $t,
				"$label: read_at($rel, $t) is refused only because the since ($since) passed it");
		}
		else
		{
			$err =~ s/\n.*//s;
			fail("$label: read_at($rel, $t), answered before the crash, fails now: $err");
		}
	}

	($ok, $out, $err) = sq($n,
		q{SELECT string_agg(format('%s | %s | %s', check_name, object, detail), E'\n')
		    FROM mzcoord.check_consistency()});
	ok($ok && $out eq '', "$label: check_consistency() finds nothing");
	diag("$label: check_consistency():\n" . ($ok ? $out : $err)) unless $ok && $out eq '';

	observe($st);
}

sub crash
{
	my ($node, @sessions) = @_;
	$node->stop('immediate');
	foreach my $s (@sessions) { eval { $s->quit; }; }
	$node->start;
}

# Tables' sinces and uppers are near the clock (not a day ahead).
sub tables_near_clock
{
	my ($node, $label) = @_;
	my ($ok, $out, $err) = sq($node, qq{
		SELECT relation::text, since::numeric - $NOW, upper::numeric - $NOW
		  FROM mzcoord.frontiers WHERE kind = 'table' AND state = 'active' ORDER BY 1});
	if (!$ok || $out eq '')
	{
		fail("$label: table frontiers: $err");
		return;
	}
	foreach my $line (split /\n/, $out)
	{
		my ($rel, $s, $u) = split /\|/, $line;
		ok($u ne '' && $u <= $NEAR && $u >= -$NEAR,
			"$label: the upper of $rel is near the clock (upper - now = $u ms)");
		ok($s ne '' && $s <= $NEAR,
			"$label: the since of $rel is not ahead of the clock (since - now = $s ms)");
	}
}

# ===========================================================================
# 1. The oracle ahead of the clock, across crashes.
# ===========================================================================
if ($run{1})
{
	my $node = mzcoord_node('crash_oracle', create_extension => 1);
	$node->safe_psql('postgres', q{
		CREATE TABLE w (a int);
		SELECT mzcoord.create_table('w');
		CREATE TABLE obs (ts bigint, who int);
		-- Writes alternating with strict serializable reads, each in its own
		-- transaction: every read closes the oracle at the last write, so
		-- the next write gets a new timestamp (no group commit), faster
		-- than the clock.  Every 100th read time is recorded durably.
		CREATE PROCEDURE burst(n int, who int) LANGUAGE plpgsql AS $$
		DECLARE r bigint;
		BEGIN
			FOR i IN 1 .. n LOOP
				INSERT INTO w VALUES (who);
				COMMIT;
				r := mzcoord.select_timestamp(ARRAY['w'::regclass]);
				IF i % 100 = 0 THEN INSERT INTO obs VALUES (r, who); END IF;
				COMMIT;
			END LOOP;
		END $$;
	});
	my $st = new_state($node, marker => 'w',
		extra_read_sql => 'SELECT max(ts) FROM obs');

	$node->safe_psql('postgres', 'INSERT INTO w VALUES (1), (2)');
	my $t0 = record_read_now($st, 'w');

	# 1a: a burst, then a crash at once.
	$node->safe_psql('postgres', 'CALL burst(10000, 0)');
	observe($st);
	my $ahead = $node->safe_psql('postgres',
		"SELECT oracle_read_ts - $NOW FROM mzcoord.controller_status()");
	note("1a: the oracle is $ahead ms ahead of the clock before the crash");
	foreach my $t (split /\n/, $node->safe_psql('postgres', q{
		SELECT ts FROM obs WHERE who = 0 ORDER BY ts DESC LIMIT 3}))
	{
		record_read($st, 'w', $t);
	}
	my $t1 = record_read_now($st, 'w');
	observe($st);

	crash($node);
	check_restart($st, '1a oracle after a burst');

	# 1b: crash in the middle of write bursts of three sessions.
	my @writers;
	foreach my $k (1 .. 3)
	{
		my $bg = $node->background_psql('postgres', on_error_stop => 0);
		$bg->query_until(qr/go/, "\\echo go\nCALL burst(100000000, $k);\n");
		push @writers, $bg;
	}
	foreach (1 .. 3)
	{
		Time::HiRes::sleep(0.5);
		observe($st);
	}
	my $mid = record_read_now($st, 'w');
	crash($node, @writers);
	check_restart($st, '1b oracle after a crash amid write bursts');

	$node->stop;
}

# ===========================================================================
# 2. A since that moved must not go back, nor reads return wrong rows.
# ===========================================================================
if ($run{2})
{
	my $node = mzcoord_node('crash_since', create_extension => 1);
	$node->safe_psql('postgres', q{
		SELECT mzcoord.create_source('s', 'k int, v text', '1 day');
		CREATE TABLE tb (k int);
		SELECT mzcoord.create_table('tb', '1 day');
	});
	my $st = new_state($node, marker => 'tb');

	my $u0 = $node->safe_psql('postgres',
		q{SELECT upper FROM mzcoord.frontiers WHERE relation = 's'::regclass});
	# The table: writes more than a second apart.
	my $h = history_of($node, 'tb');
	$node->safe_psql('postgres', 'INSERT INTO tb VALUES (1)');
	Time::HiRes::sleep(1.2);
	$node->safe_psql('postgres', 'INSERT INTO tb VALUES (2)');
	$node->safe_psql('postgres', 'DELETE FROM tb WHERE k = 1');
	Time::HiRes::sleep(1.2);
	$node->safe_psql('postgres', 'INSERT INTO tb VALUES (3)');
	my @tw = split /\n/, $node->safe_psql('postgres', "SELECT DISTINCT ts FROM $h ORDER BY ts");

	# The source: updates at several times, then complete up to u0 + 4000,
	# once the clock is there (not ahead of it).
	poll($node, "SELECT $NOW >= $u0 + 4000", 30) or die 'the clock does not move';
	$node->safe_psql('postgres', qq{
		SELECT mzcoord.append(NULL::s, $u0, ARRAY[ROW(1, 'a')]::s[]);
		SELECT mzcoord.append(NULL::s, $u0 + 1500, ARRAY[ROW(2, 'b')]::s[]);
		SELECT mzcoord.append(NULL::s, $u0 + 3000, ARRAY[ROW(3, 'c')]::s[], ARRAY[ROW(1, 'a')]::s[]);
		SELECT mzcoord.advance_upper('s', $u0 + 4000);
	});
	my $tnow = $node->safe_psql('postgres', q{SELECT mzcoord.select_timestamp(ARRAY['tb'::regclass])});

	is(record_read($st, 's', $u0 + 1), '(1,a)', '2: the source reads (1,a) at u0 + 1');
	record_read($st, 's', $u0 + $_) for (0, 1499, 1500, 2999, 3000, 3999);
	foreach my $t (@tw) { record_read($st, 'tb', $t); record_read($st, 'tb', $t - 1); }
	record_read($st, 'tb', $tnow);
	is($st->{reads}[-1][2], '(2) (3)', '2: the table reads (2) (3) now');
	observe($st);
	# Let the coordinator's ticks take note of the new upper first.
	Time::HiRes::sleep(0.5);

	# Shrink the window: the since jumps forward (the table's once the
	# coordinator's tick moved its upper); compact up to it.
	$node->safe_psql('postgres', q{
		SELECT mzcoord.set_retain_history('s', '1 second');
		SELECT mzcoord.set_retain_history('tb', '1 second');
	});
	ok(poll($node, qq{SELECT bool_and(since > CASE WHEN relation = 's'::regclass THEN $u0 + 1 ELSE $tw[0] END)
		FROM mzcoord.frontiers WHERE relation IN ('s'::regclass, 'tb'::regclass)}, 30),
		'2: retain history 1 s moves the sinces of s and tb past their first updates');
	$node->safe_psql('postgres', q{
		SELECT mzcoord.compact('s');
		SELECT mzcoord.compact('tb');
	});
	observe($st);

	# Grow the window again: the sinces stay where they are (they never go
	# back), and so must they after a crash that comes at once: the
	# coordinator is killed (SIGKILL: the postmaster restarts the cluster)
	# right after the commit, from a session that is already connected.
	my $coord = $node->safe_psql('postgres', 'SELECT pid FROM mzcoord.worker_status()');
	my $bg = $node->background_psql('postgres');
	my $sinces = $bg->query_safe(q{
		SELECT mzcoord.set_retain_history('s', '1 day');
		SELECT mzcoord.set_retain_history('tb', '1 day');
		SELECT string_agg(since::text, ' ' ORDER BY relation::text)
		  FROM mzcoord.frontiers WHERE relation IN ('s'::regclass, 'tb'::regclass);
	});
	kill 'KILL', $coord;
	my ($ss, $ts) = split / /, (split /\n/, $sinces)[-1];
	$st->{since}{s} = max2($st->{since}{s}, $ss);
	$st->{since}{tb} = max2($st->{since}{tb}, $ts);
	note("2: before the crash: since of s = u0 + " . ($ss - $u0) . ", since of tb = $ts (first write $tw[0])");
	eval { $bg->quit; };
	# The postmaster notices the crash and restarts; wait until it is back.
	ok(poll($node, qq{SELECT (SELECT pid FROM mzcoord.worker_status()) <> $coord
			AND (SELECT ready FROM mzcoord.controller_status())}, 60),
		'2: the cluster restarted after the coordinator was killed');
	check_restart($st, '2 since after compaction');
	my ($ok, $out, $err) = sq($node, "SELECT since FROM mzcoord.frontiers WHERE relation = 's'::regclass");
	ok($ok && $out >= $ss, "2: since of s after the crash (u0 + " . ($out - $u0) . ") is at least u0 + " . ($ss - $u0));
	($ok, $out, $err) = sq($node, sprintf($READ, 's', $u0 + 1), '3s');
	ok(($ok && $out eq '(1,a)') || (!$ok && $err =~ /is not valid for all inputs/),
		'2: read_at(s, u0 + 1) is (1,a) or refused, never other rows (got '
		  . ($ok ? $out : 'refused') . ')');

	$node->stop;
}

# ===========================================================================
# 3. A source's upper does not move the table timeline; the end of time.
# 4. check_consistency() reports history above a table's upper.
# ===========================================================================
if ($run{3})
{
	my $node = mzcoord_node('crash_drag', create_extension => 1);
	$node->safe_psql('postgres', q{
		CREATE TABLE t1 (a int);
		SELECT mzcoord.create_table('t1');
		CREATE TABLE t2 (a int);
		SELECT mzcoord.create_table('t2', '1 hour');
		SELECT mzcoord.create_source('sd', 'k int');
		INSERT INTO t1 VALUES (1);
		INSERT INTO t2 VALUES (1);
	});
	# 4. A history row above the upper of a table (superuser tampering: an
	# insertion and its retraction, so that the table's contents still
	# match its history).
	{
		my $h2 = history_of($node, 't2');
		my $reports = sub {
			my ($ok, $out, $err) = sq($node, q{
				SELECT format('%s | %s | %s', check_name, object, detail)
				  FROM mzcoord.check_consistency() ORDER BY 1});
			return $ok ? $out : "error: $err";
		};
		my $before = $reports->();
		my $above = $node->safe_psql('postgres',
			q{SELECT upper + 3600000 FROM mzcoord.frontiers WHERE relation = 't2'::regclass});
		$node->safe_psql('postgres',
			"INSERT INTO $h2 (c1, ts, diff) VALUES (42, $above, 1), (42, $above, -1)");
		my %old = map { $_ => 1 } split /\n/, $before;
		my @new = grep { !$old{$_} } split /\n/, $reports->();
		ok(@new > 0, '4: check_consistency() reports history rows above the upper of a table');
		note("4: reported: @new");
		$node->safe_psql('postgres', "DELETE FROM $h2 WHERE ts = $above");
		is($reports->(), $before, '4: and no longer once they are gone');
	}

	my $st = new_state($node, marker => 't1');
	record_read_now($st, 't1');
	observe($st);

	# A source a day ahead of the clock.
	my ($ok, $out, $err) = sq($node, "SELECT mzcoord.advance_upper('sd', $NOW + $DAY)");
	note('3: advance_upper(sd, now + 1 day) ' . ($ok ? 'accepted' : "refused: $err"));
	observe($st);
	tables_near_clock($node, '3 before the restart');
	crash($node);
	check_restart($st, '3a restart with a source a day ahead');
	tables_near_clock($node, '3a after the restart');

	# Tables keep compacting.
	$node->safe_psql('postgres', 'UPDATE t1 SET a = 2 WHERE a = 1');
	my $w = $node->safe_psql('postgres',
		'SELECT max(ts) FROM ' . history_of($node, 't1'));
	ok(poll($node, qq{SELECT compacted > $w FROM mzcoord.storage WHERE relation = 't1'::regclass}, 20),
		'3a: t1 is compacted past a new write after the restart');
	observe($st);

	# Without the source, the tables are where they were (not back a day).
	$node->safe_psql('postgres', q{SELECT mzcoord.drop('sd')});
	forget($st, 'sd');
	crash($node);
	check_restart($st, '3b restart after the source a day ahead is dropped');
	tables_near_clock($node, '3b after the restart');

	# Times at the end of time, or far beyond the clock, are refused.
	$node->safe_psql('postgres', q{
		CREATE TABLE t_mv (a int);
		SELECT mzcoord.create_table('t_mv');
		SELECT mzcoord.create_source('s_end', 'k int');
		SELECT mzcoord.create_source('s_2100', 'k int');
	});
	# The calls are well-formed: the same with a time near the clock works.
	($ok, $out, $err) = sq($node, q{
		BEGIN;
		SELECT mzcoord.create_materialized_view('mv_ok', 'SELECT a FROM t_mv', NULL, ARRAY['at creation']);
		ROLLBACK;});
	ok($ok, "3c: create_materialized_view with a refresh at creation works $err");
	($ok, $out, $err) = sq($node, q{BEGIN;
		SELECT mzcoord.advance_upper('s_end', upper + 1000) FROM mzcoord.frontiers WHERE relation = 's_end'::regclass;
		ROLLBACK;});
	ok($ok, "3c: advance_upper by 1 s works $err");

	foreach my $c (
		[ q{SELECT mzcoord.advance_upper('s_end', 9223372036854775807)}, 'advance_upper to 2^63-1' ],
		[ q{SELECT mzcoord.advance_upper('s_2100', 4102444800000)}, 'advance_upper to 2100-01-01' ],
		[ q{SELECT mzcoord.create_materialized_view('mv_end', 'SELECT a FROM t_mv', NULL, ARRAY['at 9223372036854775807'])},
		  'a materialized view refreshed at 2^63-1' ],
		[ q{SELECT mzcoord.create_materialized_view('mv_2100', 'SELECT a FROM t_mv', NULL, ARRAY['at 2100-01-01 00:00:00+00'])},
		  'a materialized view refreshed in 2100' ])
	{
		($ok, $out, $err) = sq($node, $c->[0]);
		ok(!$ok, "3c: $c->[1] is refused");
		note("3c: $c->[1]: " . ($ok ? 'accepted' : $err));
	}
	observe($st);
	crash($node);
	check_restart($st, '3c restart after times at the end of time');
	($ok, $out, $err) = sq($node, q{SELECT mzcoord.select_timestamp(ARRAY['t1'::regclass])}, '10s');
	ok($ok && $out =~ /^\d+$/, "3c: select_timestamp of a table works after the restart $err");
	tables_near_clock($node, '3c after the restart');

	$node->stop;
}

# ===========================================================================
# 5. The extension, a table and its registration in one transaction, at
#    once after a start and after a crash restart.
# ===========================================================================
if ($run{5})
{
	my $sql = q{CREATE EXTENSION mzcoord; CREATE TABLE t (a int); SELECT mzcoord.create_table('t');};

	# One psql -c: one implicit transaction.
	my $at_once = sub {
		my ($node, $what, $label) = @_;
		my ($ret, $out, $err) = $node->psql('postgres', '',
			extra_params => [ '-v', 'VERBOSITY=verbose', '-c', $what ]);
		is($ret, 0, "$label: succeeds in one psql call");
		unlike($err // '', qr/ERROR/, "$label: without an error");
		diag("$label: $err") if ($err // '') =~ /ERROR/;
	};

	my $fresh = mzcoord_node('fresh_start');
	$at_once->($fresh, $sql, '5a fresh server: CREATE EXTENSION; CREATE TABLE; create_table');
	my (undef, $n5) = sq($fresh, q{
		INSERT INTO t VALUES (1);
		SELECT count(*) FROM mzcoord.read_at(NULL::t, mzcoord.select_timestamp(ARRAY['t'::regclass]))});
	is($n5, '1', '5a: the table works');

	# Crash restart, then at once a new table (the extension exists).
	if ($fresh->safe_psql('postgres',
			q{SELECT count(*) FROM pg_extension WHERE extname = 'mzcoord'}) eq '0')
	{
		$fresh->safe_psql('postgres', 'CREATE EXTENSION mzcoord');
		poll($fresh, 'SELECT ready FROM mzcoord.controller_status()', 60)
		  or die 'controller not ready';
	}
	crash($fresh);
	$at_once->($fresh, q{CREATE TABLE t2 (a int); SELECT mzcoord.create_table('t2');},
		'5b right after a crash restart: CREATE TABLE; create_table');
	$fresh->stop;

	# A fresh server, crash restarted, then at once the extension.
	my $fresh2 = mzcoord_node('fresh_crash');
	crash($fresh2);
	$at_once->($fresh2, $sql,
		'5c right after a crash restart of a fresh server: CREATE EXTENSION; CREATE TABLE; create_table');
	$fresh2->stop;
}

done_testing();
