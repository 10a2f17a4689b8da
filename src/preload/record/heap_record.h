// The heap record (schema/heap_record_format.h): the sampled live heap kept, change by change, in a
// shared file mapping next to the process's profiles, so that SIGKILL and the OOM killer, which
// let heaprec run no code, still leave the heap the process died with and its peak.
//
// The writer is the recorder's LiveSetObserver: each change to the live set is one more store into
// the mapping, made by the allocating thread under the lock that already orders it, on the sampled
// path only (an unsampled malloc or free never gets here). The kernel writes the dirty pages back
// on its own schedule, also after the process is gone; heaprec never writes the file with write()
// and never waits for the disk. The file's space is reserved (posix_fallocate) before it is used,
// so a full disk stops the record (kIncomplete) instead of raising SIGBUS in the program.
//
// The file lives while the process does: the final profile (any ending heaprec sees) marks it
// ended and removes it, and exec removes it; what is left after a process is gone is a record of a
// death heaprec did not see. Under `heaprec run` "removes" is "parks": the emptied inode is kept
// for the next process's record (schema/heap_record_format.h, kSparePrefix). No descriptor stays
// open: the file is reopened by name, and checked to be the same file, each time it grows.
#pragma once

#include <cstdint>

#include "core/heap_snapshot.h"
#include "preload/dump/dump_reason.h"

namespace heaprec::preload {

// Creates this process's record and attaches it to `recorder`, once per process (and once per fork
// child): from the dump thread, under the dump's lock, when it first wakes, which is when the live
// heap first passes 64 KiB (the first peak capture). A process that never holds that much, like
// the subshells a shell forks by the hundred, never pays for a file. Does nothing when profiles go
// nowhere, the file cannot be made, or the final profile was written.
void StartHeapRecord(HeapRecorder& recorder);

// The final profile is written (or the image is about to be replaced by exec): the record says no
// more, stops being told of changes and is unmapped, and its file goes (under `heaprec run`, as a
// spare the next process's record takes over). With the dump locks held (LockDumps).
void EndHeapRecord();

// The final profile of this `reason` could not be written (`error`): the record stays, marked
// with how the process ended, for `heaprec run` or `heaprec recover` to write that profile from it
// (labelled with this ending, not as a kill). With the dump's lock held.
void KeepHeapRecordOfUnwrittenEnding(DumpReason reason, int signal_number, int error);

// In a process heaprec attach loaded heaprec into: what the profiles say of the time before the
// attach (held_at_attach, ...), copied into the record for the heap at death; at the record's
// creation and at every look at the heap (every 2 s). With the dump's lock held.
void NoteAttachInHeapRecord();

// The peak capture (under its lock) has copied the live set: the record keeps a copy too.
void RecordPeakCopy(const HeapSnapshot& snapshot, std::int64_t live_bytes, std::uint64_t time_ns);

// Whether a record is being kept with the peak copies in it: a process killed now leaves its peak
// in the record, which is what lets the dump thread put off the peak profile's first write.
bool HeapRecordKeepsPeaks();

// The record file's size in bytes (0 without a record), for the final profile's comments.
std::uint64_t HeapRecordBytes();

// fork(): the record's lock is taken with the recorder's; the child stops writing the parent's
// file (its mapping is shared with the parent) before anything else; its own dump thread starts
// its own record.
void LockHeapRecordForFork();
void UnlockHeapRecordAfterForkInParent();
void DropParentHeapRecordInChild();

}  // namespace heaprec::preload
