// The manifest: how `heaprec run` learns what every process of the program wrote. The CLI creates
// an empty file and names it in HEAPREC_MANIFEST; each process appends one line per profile it
// writes (and per message it could not print), with one O_APPEND write so that concurrent
// processes never interleave a line:
//
//     PID <TAB> REASON <TAB> PATH        REASON: a profile_schema.h reason; PATH: the file
//     PID <TAB> message <TAB> TEXT       a message on one line, tabs made spaces
//     PID <TAB> record <TAB> PATH        the process's heap record (schema/heap_record_format.h)
//     PID <TAB> declined <TAB> TEXT      why a process runs unprofiled (a bad setting in the
//                                        environment), for heaprec run to say once
//     PID <TAB> unwritten <TAB> PATH     a profile the process could not write (its own message
//                                        says why), so that heaprec run does not guess at a cause
//
// A peak profile is rewritten as the peak grows: a later line for the same PATH replaces the
// earlier one. Header-only and allocation-free (the preload library writes it).
#pragma once

namespace heaprec::schema {

inline constexpr char kManifestVariable[] = "HEAPREC_MANIFEST";
// Set with the manifest when `heaprec run` pushes each file as it is listed: the library writes the
// peak profile at once rather than keep it in the heap record for a while.
inline constexpr char kPeakAtOnceVariable[] = "HEAPREC_PEAK_AT_ONCE";
// Set when `heaprec run` rewrites every profile (it symbolizes them, and does not push them as
// written): the library stores its profiles uncompressed in the gzip file, for the rewrite to
// compress once, instead of compressing them in the program's processes for heaprec to decompress.
inline constexpr char kUncompressedVariable[] = "HEAPREC_UNCOMPRESSED";
inline constexpr char kManifestSeparator = '\t';
inline constexpr char kManifestMessage[] = "message";
inline constexpr char kManifestRecord[] = "record";
inline constexpr char kManifestDeclined[] = "declined";
inline constexpr char kManifestUnwritten[] = "unwritten";

}  // namespace heaprec::schema
