#!/usr/bin/perl
# Checks contrib/grafana/mzcoord.json against contrib/prometheus/queries.yaml:
# the dashboard is valid JSON, every panel has a query, and every mzcoord
# metric a query names is one the exporter exposes with that file (its
# names are <namespace>_<column> for the GAUGE and COUNTER columns).
# Usage: scripts/check_dashboard.pl [source tree]
use strict;
use warnings;
use JSON::PP;

my $root = shift // '.';
my $yaml = "$root/contrib/prometheus/queries.yaml";
my $json = "$root/contrib/grafana/mzcoord.json";
my @problems;

# The exported names, from the queries file's structure (namespaces at the
# left margin, "- column:" entries, each followed by its usage).
my (%exported, $ns, $column);
open(my $y, '<', $yaml) or die "cannot read $yaml: $!";
while (my $line = <$y>)
{
	next if $line =~ /^\s*#/;
	if ($line =~ /^(\w+):\s*$/) { $ns = $1; next; }
	if ($line =~ /^\s+-\s+"?(\w+)"?:\s*$/) { $column = $1; next; }
	if ($line =~ /^\s+usage:\s*"?(\w+)"?/ && defined $ns && defined $column)
	{
		$exported{"${ns}_$column"} = 1 if $1 eq 'GAUGE' || $1 eq 'COUNTER';
		undef $column;
	}
}
close $y;
push @problems, "$yaml exports no metric" unless %exported;

open(my $j, '<', $json) or die "cannot read $json: $!";
my $text = do { local $/; <$j> };
close $j;
my $dash = eval { JSON::PP->new->decode($text) };
if (!$dash)
{
	push @problems, "$json is not valid JSON: $@";
}
else
{
	my $panels = $dash->{panels} // [];
	push @problems, "$json has no panels" unless @$panels;
	foreach my $p (@$panels)
	{
		my $title = $p->{title} // '(untitled)';
		my @targets = @{ $p->{targets} // [] };
		push @problems, "panel \"$title\" has no query" unless @targets;
		foreach my $t (@targets)
		{
			my $expr = $t->{expr} // '';
			my @names = $expr =~ /\b(mzcoord_\w+)/g;
			push @problems, "panel \"$title\" queries no mzcoord metric: $expr" unless @names;
			foreach my $n (@names)
			{
				push @problems, "panel \"$title\" uses $n, which the exporter does not expose"
				  unless $exported{$n};
			}
		}
	}
}

if (@problems)
{
	print STDERR "check_dashboard: $_\n" foreach @problems;
	exit 1;
}
printf "check_dashboard: %d panels, every metric among the %d the exporter exposes\n",
  scalar @{ $dash->{panels} }, scalar keys %exported;
