# mzcoord's metrics through a real exporter (issue 24): Debian's
# prometheus-postgres-exporter, listening on 127.0.0.1 only, with
# contrib/prometheus/queries.yaml, against a test cluster.  /metrics has
# every metric family of mzcoord.metrics with the values the view shows:
# equal for what does not move while nothing happens (leases, holds,
# failures, the collections listed), and for counters between the view's
# values read just before and just after the scrape.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use HTTP::Tiny;
use IPC::Run;
use Time::HiRes qw(usleep);

my $exporter = '/usr/bin/prometheus-postgres-exporter';
ok(-x $exporter, 'prometheus-postgres-exporter is installed (scripts/test.sh installs it)')
  or BAIL_OUT('no exporter');
my $queries = "$FindBin::RealBin/../../contrib/prometheus/queries.yaml";
ok(-f $queries, 'contrib/prometheus/queries.yaml is there');

my $node = mzcoord_node('prom', create_extension => 1);
$node->safe_psql('postgres', q{
	CREATE TABLE pt (k int, v int);
	INSERT INTO pt SELECT g, g FROM generate_series(1, 5) g;
	SELECT mzcoord.create_table('pt', '1 hour');
	SELECT mzcoord.create_materialized_view('pv', 'SELECT k, v FROM pt', '1 hour');
	SELECT mzcoord.create_index('pt_idx', 'pt', ARRAY['k']);
	SELECT mzcoord.create_lease('exported', ARRAY['pt'::regclass]);
});
$node->poll_query_until('postgres', q{
	SELECT bool_and(upper IS NOT NULL AND upper > 0) FROM mzcoord.frontiers})
  or die;

my $port = PostgreSQL::Test::Cluster::get_free_port();
my $user = getpwuid($<);
local $ENV{DATA_SOURCE_NAME} = sprintf('host=%s port=%d user=%s dbname=postgres sslmode=disable',
	$node->host, $node->port, $user);
my ($out, $err) = ('', '');
my $h = IPC::Run::start(
	[ $exporter, "--web.listen-address=127.0.0.1:$port",
	  "--extend.query-path=$queries", '--disable-settings-metrics' ],
	'>', \$out, '2>', \$err);

# Scrape until the exporter answers with mzcoord's metrics.
my $http = HTTP::Tiny->new(timeout => 10);
sub scrape
{
	for (1 .. 600)
	{
		my $r = $http->get("http://127.0.0.1:$port/metrics");
		return $r->{content} if $r->{success} && $r->{content} =~ /^mzcoord_ticks_total[{ ]/m;
		usleep(100_000);
	}
	diag("exporter output: $out $err");
	die 'the exporter did not serve mzcoord metrics';
}

# name{labels} -> value, labels sorted by name, without the exporter's own
# (server).
sub parse
{
	my ($text) = @_;
	my %m;
	foreach my $line (split /\n/, $text)
	{
		next unless $line =~ /^(mzcoord_\w+)(?:\{(.*)\})? (\S+)$/;
		my ($name, $labels, $value) = ($1, $2 // '', $3);
		my %l = $labels =~ /(\w+)="((?:[^"\\]|\\.)*)"/g;
		delete $l{server};
		my $key = $name . '{' . join(',', map { "$_=$l{$_}" } sort keys %l) . '}';
		$m{$key} = $value;
	}
	return \%m;
}

# The view's samples, keyed the same way.
sub view
{
	my %m;
	foreach my $row (split /\n/, $node->safe_psql('postgres', q{
		SELECT metric || '{' || coalesce((SELECT string_agg(k || '=' || v, ',' ORDER BY k)
		                                    FROM jsonb_each_text(labels) AS j(k, v)), '') || '}',
		       value
		  FROM mzcoord.metrics}))
	{
		my ($k, $v) = split /\|/, $row;
		$m{$k} = $v;
	}
	return \%m;
}

my $before = view();
my $scraped = parse(scrape());
my $after = view();
like($scraped->{'mzcoord_ticks_total{}'} // '', qr/^\d/, 'the exporter serves mzcoord_ticks_total');

# Every family of the view is exported, and every sample's labels.
my %families = map { (/^(\w+)\{/)[0] => 1 } keys %$before;
foreach my $f (sort keys %families)
{
	ok((grep { /^\Q$f\E\{/ } keys %$scraped), "family $f is exported");
}
foreach my $k (sort grep { /^mzcoord_collection_since_lag_seconds/ } keys %$before)
{
	ok(exists $scraped->{$k}, "collection sample $k is exported with the view's labels");
}

# What does not move while nothing happens: equal.
foreach my $k ('mzcoord_leases_current{state=active}', 'mzcoord_leases_current{state=expired}',
	'mzcoord_read_holds_current{kind=lease}', 'mzcoord_read_holds_current{kind=maintained}',
	'mzcoord_maintenance_failures{kind=materialized_view,object=public.pv}')
{
	ok(defined $scraped->{$k} && $scraped->{$k} == $before->{$k} && $before->{$k} == $after->{$k},
		"$k: exported " . ($scraped->{$k} // 'nothing') . ", the view $before->{$k}");
}
is($scraped->{'mzcoord_leases_current{state=active}'}, 1, 'the one lease is active');

# Counters: between the view's values before and after the scrape.
foreach my $k ('mzcoord_ticks_total{}', 'mzcoord_catalog_rows_written_total{table=compaction_bounds}',
	'mzcoord_catalog_bytes_written_total{table=compaction_bounds}',
	'mzcoord_tick_duration_seconds_total{}')
{
	my $v = $scraped->{$k};
	ok(defined $v && $v >= $before->{$k} - 1e-6 && $v <= $after->{$k} + 1e-6,
		"$k: exported " . ($v // 'nothing') . ", the view $before->{$k} .. $after->{$k}");
}
cmp_ok($scraped->{'mzcoord_catalog_rows_written_total{table=compaction_bounds}'}, '>', 0,
	'the tick has written bounds');

$h->kill_kill;
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'consistent');
$node->stop;
done_testing();
