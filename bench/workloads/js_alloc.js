// node workload for the hot-path benchmark: Buffers (allocated by node with malloc) and strings of
// mixed sizes, built and dropped in rounds, plus ordinary objects for the garbage collector.
//   node js_alloc.js SCALE
'use strict';
const scale = Number(process.argv[2] || 100000);
let checksum = 0;
for (let round = 0; round < 5; round++) {
  const live = new Map();
  for (let i = 0; i < scale; i++) {
    const size = 16 + ((i * 7919) % 4000);
    const key = (i * 104729) % (scale >> 1);
    live.set(key, { buf: Buffer.alloc(size, i & 255), name: 'item-' + i });
  }
  for (const [k, v] of live) {
    if (k % 13 === 0) checksum += v.buf.length + v.name.length;
  }
  checksum += live.size;
}
console.log(checksum);
