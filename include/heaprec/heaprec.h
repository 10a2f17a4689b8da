/* heaprec: the public C API of the live-heap profiler.
 *
 * A program that wants to control the profiler itself links against libheaprec.so (or runs with it
 * preloaded) and calls these functions. Every function is thread-safe, returns 0 on success and a
 * negative errno value on failure, and is a no-op returning -ENOSYS-like errors when profiling is
 * off (bad configuration, setuid program). None may be called from a signal handler.
 */
#ifndef HEAPREC_HEAPREC_H_
#define HEAPREC_HEAPREC_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes a profile of the live heap now. `path` NULL: the next file named by the output template
 * (HEAPREC_OUTPUT, with a sequence number). The file is written atomically. */
int heaprec_dump(const char* path);

/* Stops sampling new allocations; objects already sampled stay tracked until freed. In a process
 * started dormant (HEAPREC_DORMANT=1) this is `heaprec detach`. */
int heaprec_stop(void);

/* Resumes sampling after heaprec_stop(). In a process started dormant (HEAPREC_DORMANT=1) this is
 * `heaprec attach`: sampling starts a moment later, once heaprec's thread has set it up. */
int heaprec_start(void);

/* Changes the mean sampling interval in bytes (1 = every allocation). Objects sampled before keep
 * the weight they were sampled with. */
int heaprec_set_sample_interval(uint64_t bytes);

/* 1 when the profiler is loaded and sampling, 0 otherwise. */
int heaprec_is_active(void);

#ifdef __cplusplus
}
#endif

#endif /* HEAPREC_HEAPREC_H_ */
