# Crashes at the test-only failpoints of issue 11 (mzcoord.failpoint), under
# write load: bounds written by a publication but not committed
# (publish_before_commit), a history compacted but its compacted frontier
# not recorded (compaction_before_record), and the middle of a bootstrap
# (bootstrap), and the middle of releasing expired leases (lease_expiry).
# The failpoint raises PANIC, so the postmaster crash-restarts
# the server; as the setting survives in postgresql.auto.conf and the point
# is reached again after the restart, the test then stops the server,
# removes the setting and starts it.
#
# After each restart, compared with what was observed before the crash: no
# compaction bound, since or upper went back; every read_at answered before
# gives the same rows (on the table with a long retain history; on the
# other one a read may be refused because its since passed the time, never
# answered differently); check_consistency() is clean.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run ();
use Time::HiRes ();

my $node = mzcoord_node('crashpoints', create_extension => 1);
$node->safe_psql('postgres', q{
	CREATE TABLE keep (k int, v int);
	CREATE TABLE churn (k int, v int);
	SELECT mzcoord.create_table('keep', '1 hour');
	SELECT mzcoord.create_table('churn');
	INSERT INTO keep SELECT g, 0 FROM generate_series(1, 20) g;
	INSERT INTO churn SELECT g, 0 FROM generate_series(1, 20) g;
});

# Write load: a psql running autocommit updates until it is killed (or its
# server crashes under it).
my $script = $node->basedir . '/load.sql';
{
	open my $fh, '>', $script or die $!;
	for my $i (1 .. 20000)
	{
		my $k = 1 + $i % 20;
		print $fh "UPDATE keep SET v = v + 1 WHERE k = $k;\n";
		print $fh "UPDATE churn SET v = v + 1 WHERE k = $k;\n";
		print $fh "SELECT pg_sleep(0.005);\n" if $i % 4 == 0;
	}
	close $fh;
}

sub start_load
{
	my ($out, $err) = ('', '');
	return IPC::Run::start(
		[ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-f', $script ],
		'>', \$out, '2>', \$err);
}

sub stop_load
{
	my ($h) = @_;
	eval { $h->kill_kill; };
}

# Bounds, sinces and uppers by global id.
sub frontiers
{
	my %f;
	my $rows = $node->safe_psql('postgres', q{
		SELECT f.global_id, coalesce(b.bound, -1), coalesce(f.since, -1), coalesce(f.upper, -1)
		  FROM mzcoord.frontiers f
		  LEFT JOIN mzcoord.compaction_bounds b ON b.global_id = f.global_id});
	for my $line (split /\n/, $rows)
	{
		my ($gid, $bound, $since, $upper) = split /\|/, $line;
		$f{$gid} = { bound => $bound, since => $since, upper => $upper };
	}
	return \%f;
}

# Reads at a few recorded times of each table: [table, time, rows].
sub record_reads
{
	my @reads;
	for my $t ('keep', 'churn')
	{
		# The since of churn (one second of history) can pass the time
		# read between the lookup and the read: then look again.
		for my $try (1 .. 10)
		{
			my ($since, $upper) = split /\|/, $node->safe_psql('postgres',
				"SELECT since, upper FROM mzcoord.frontiers WHERE relation = '$t'::regclass");
			my @these;
			for my $at ($since, int(($since + $upper) / 2), $upper - 1)
			{
				my ($ret, $rows) = $node->psql('postgres',
					"SELECT string_agg(format('%s:%s', k, v), ',' ORDER BY k, v)
					   FROM mzcoord.read_at(NULL::$t, $at)");
				last if $ret != 0;
				push @these, [ $t, $at, $rows ];
			}
			if (@these == 3)
			{
				push @reads, @these;
				last;
			}
			die "cannot read $t at its since" if $try == 10;
		}
	}
	return \@reads;
}

sub check_after
{
	my ($point, $before, $reads) = @_;
	my $after = frontiers();
	my @regressed;
	for my $gid (sort keys %$before)
	{
		next unless exists $after->{$gid};
		for my $k ('bound', 'since', 'upper')
		{
			push @regressed, "$gid $k $before->{$gid}{$k} -> $after->{$gid}{$k}"
			  if $after->{$gid}{$k} < $before->{$gid}{$k};
		}
	}
	is(join('; ', @regressed), '', "$point: no bound, since or upper went back");

	my @wrong;
	for my $r (@$reads)
	{
		my ($t, $at, $rows) = @$r;
		my ($ret, $out, $err) = $node->psql('postgres',
			"SELECT string_agg(format('%s:%s', k, v), ',' ORDER BY k, v)
			   FROM mzcoord.read_at(NULL::$t, $at)");
		if ($ret != 0)
		{
			my $since = $node->safe_psql('postgres',
				"SELECT since FROM mzcoord.frontiers WHERE relation = '$t'::regclass");
			push @wrong, "$t at $at refused ($err)"
			  if $t eq 'keep' || $since <= $at;
		}
		elsif ($out ne $rows)
		{
			push @wrong, "$t at $at: '$rows' before, '$out' after";
		}
	}
	is(join('; ', @wrong), '', "$point: every read answered before gives the same rows");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
		'0', "$point: check_consistency() is clean");
}

for my $point ('publish_before_commit', 'compaction_before_record', 'bootstrap',
	'lease_expiry')
{
	my $load = start_load();
	sleep 2;
	my $held_at;
	if ($point eq 'lease_expiry')
	{
		# One lease that must stay active across the crash; the one that
		# expires is created once the failpoint is set.
		$held_at = $node->safe_psql('postgres', q{
			SELECT mzcoord.create_lease('long', ARRAY['keep'::regclass], NULL, '1 hour');
		});
	}
	my $before = frontiers();
	my $reads = record_reads();

	my $logpos = -s $node->logfile;
	# The setting is written in one session, then reloaded by pg_ctl: the
	# crash may come before a session that reloaded it could end.
	$node->safe_psql('postgres', "ALTER SYSTEM SET mzcoord.failpoint = '$point'");
	$node->reload;
	# The point is in the middle of releasing expired leases.
	$node->safe_psql('postgres', q{
		SELECT mzcoord.create_lease('short', ARRAY['churn'::regclass], NULL, '3 seconds');
	}) if $point eq 'lease_expiry';
	# A bootstrap happens at start and on request.
	$node->safe_psql('postgres', 'SELECT mzcoord._controller_rebootstrap()')
	  if $point eq 'bootstrap';
	ok($node->wait_for_log(qr/failpoint "$point" reached/, $logpos),
		"$point: the server crashed at the failpoint");
	stop_load($load);

	# The point is reached again after every crash restart: stop, remove
	# the setting, start.
	$node->stop('immediate');
	$node->adjust_conf('postgresql.auto.conf', 'mzcoord.failpoint', undef);
	$node->start;
	$node->poll_query_until('postgres', 'SELECT ready FROM mzcoord.controller_status()')
	  or die "$point: controller not ready after the restart";
	check_after($point, $before, $reads);
	if ($point eq 'lease_expiry')
	{
		is($node->safe_psql('postgres',
				"SELECT string_agg(name || ':' || state, ',' ORDER BY name) FROM mzcoord.leases"),
			'long:active,short:expired',
			'lease_expiry: the expired lease stays expired, the other is active');
		ok($node->safe_psql('postgres',
				"SELECT since <= $held_at FROM mzcoord.frontiers WHERE relation = 'keep'::regclass") eq 't',
			'lease_expiry: the since of the leased table did not pass the lease');
		$node->safe_psql('postgres', q{
			SELECT mzcoord.drop_lease('short'); SELECT mzcoord.drop_lease('long');
		});
	}
}

$node->stop;
done_testing();
