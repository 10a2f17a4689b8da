# perl workload for the hot-path benchmark: hashes of strings built, grown and dropped in rounds,
# which makes perl call malloc, realloc and free for its SVs' bodies and string buffers.
#   perl pl_alloc.pl SCALE
use strict;
use warnings;
my $scale = shift // 200000;
my $checksum = 0;
for my $round (1 .. 5) {
  my %h;
  for my $i (1 .. $scale) {
    my $k = "key-$round-" . ($i * 7919 % $scale);
    $h{$k} .= "v" x (1 + $i % 97);
  }
  my @keys = sort keys %h;
  $checksum += length($h{$keys[$_]}) for grep { $_ % 13 == 0 } 0 .. $#keys;
  delete $h{$keys[$_]} for grep { $_ % 3 == 0 } 0 .. $#keys;
  $checksum += scalar(keys %h);
}
print "$checksum\n";
