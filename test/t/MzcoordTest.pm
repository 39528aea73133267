# Shared set-up of mzcoord's TAP tests.
package MzcoordTest;

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use Exporter 'import';

our @EXPORT = qw(mzcoord_node);

# A started cluster that preloads mzcoord and serves database "postgres"
# with fast ticks; extra postgresql.conf lines may follow.  With
# create_extension => 1 the extension is created and the controller ready;
# with allows_streaming => 1 the node can be backed up for a standby.
sub mzcoord_node
{
	my ($name, %opts) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(allows_streaming => $opts{allows_streaming} // 0);
	$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'mzcoord'
mzcoord.database = 'postgres'
mzcoord.tick_interval = 50
restart_after_crash = on
} . ($opts{conf} // ''));
	$node->start;
	if ($opts{create_extension})
	{
		$node->safe_psql('postgres', 'CREATE EXTENSION mzcoord');
		$node->poll_query_until('postgres',
			'SELECT ready FROM mzcoord.controller_status()')
		  or die 'mzcoord controller not ready';
	}
	return $node;
}

1;
