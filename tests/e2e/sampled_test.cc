// Sampled mode: the estimates must be within a derived bound of the truth.
//
// The bound. heaprec samples allocations by a Poisson process on the allocated bytes (mean
// interval T; src/core/sampler.h): an allocation of n bytes is sampled with probability
// p = 1 - exp(-(n + 1) / T), independently of every other allocation (disjoint stretches of a
// Poisson process are independent; a fresh exponential draw after each sample is the same
// process, by memorylessness). A sampled object is counted with weight 1/p. For a site with N
// objects of n bytes, let I_i ~ Bernoulli(p) say whether object i was sampled; the space
// estimate is X = sum_i I_i n / p, so
//     E[X]   = N p n / p = N n                                  (unbiased),
//     Var(X) = N (n / p)^2 p (1 - p) = N n^2 (1 - p) / p,
// and for the object count (weight 1/p instead of n/p) Var = N (1 - p) / p. Groups of different
// sizes at one site are independent, so their variances add; so do sites, for the total.
// We assert |X - N n| <= k sqrt(Var(X)) + r with k = 5 and r = 2 (the writer rounds each
// (stack, size) sample's sum to an integer once). Under the normal approximation a 5-sigma
// deviation has probability ~5.7e-7 per check; the approximation needs enough sampled objects,
// so the volumes below give every checked site >= ~30 expected samples (N p >= 30; for n << T,
// N p ~ N n / T, i.e. >= 30 T bytes per site). A fixed --seed makes every run reproducible
// anyway: a pass stays a pass. (Single-threaded workloads are fully deterministic under a fixed
// seed; with threads the per-thread seeds depend on the order the threads first allocate.)
//
// Unbiasedness end to end: the mean of R independent runs (different seeds) has variance Var/R;
// MeanOverSeedsIsUnbiased asserts |mean - truth| <= 5 sqrt(Var / R) for every site.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "e2e_test_base.h"
#include "expected_sites.h"

namespace heaprec::e2e {
namespace {

constexpr double kSigmas = 5;
constexpr double kRounding = 2;
constexpr double kDefaultInterval = 512 * 1024;

// Var of the estimates of the four values for `site`, at interval T.
struct Variances {
  double alloc_objects = 0, alloc_space = 0, inuse_objects = 0, inuse_space = 0;
};

double ObjectsVariance(double objects, double size, double interval) {
  double p = SampleProbability(size, interval);
  return objects * (1 - p) / p;
}

Variances SiteVariances(const ExpectedSite& site, double interval) {
  Variances v;
  for (const Group& g : site.allocated) {
    v.alloc_objects += ObjectsVariance(g.objects, g.size, interval);
    v.alloc_space += SampledBytesVariance(g.objects, g.size, interval);
  }
  for (const Group& g : site.live) {
    v.inuse_objects += ObjectsVariance(g.objects, g.size, interval);
    v.inuse_space += SampledBytesVariance(g.objects, g.size, interval);
  }
  return v;
}

// Expected samples of the site's live objects: sum of N p.
double ExpectedLiveSamples(const ExpectedSite& site, double interval) {
  double samples = 0;
  for (const Group& g : site.live) samples += g.objects * SampleProbability(g.size, interval);
  return samples;
}

void ExpectWithin(const std::string& what, double estimate, double truth, double variance,
                  double runs = 1) {
  double bound = kSigmas * std::sqrt(variance / runs) + kRounding;
  EXPECT_LE(std::abs(estimate - truth), bound)
      << what << ": estimate " << estimate << ", truth " << truth << ", bound " << bound << " ("
      << kSigmas << " sigma, sigma " << std::sqrt(variance / runs) << ")";
}

// Checks every site of `profile` against its truth at `interval`; returns the summed truth and
// variance of the sites' live bytes.
void CheckSites(const Profile& profile, const std::vector<ExpectedSite>& sites, double interval,
                double* live_truth, double* live_variance) {
  for (const ExpectedSite& site : sites) {
    Values got = SiteValues(profile, site.name);
    Variances var = SiteVariances(site, interval);
    if (site.live.empty()) {
      // Everything allocated here was freed: nothing may be reported live, whatever was sampled.
      EXPECT_EQ(got.inuse_space, 0) << site.name;
      EXPECT_EQ(got.inuse_objects, 0) << site.name;
    } else {
      ExpectWithin(site.name + " inuse_space", got.inuse_space, site.values.inuse_space,
                   var.inuse_space);
      ExpectWithin(site.name + " inuse_objects", got.inuse_objects, site.values.inuse_objects,
                   var.inuse_objects);
    }
    ExpectWithin(site.name + " alloc_space", got.alloc_space, site.values.alloc_space,
                 var.alloc_space);
    ExpectWithin(site.name + " alloc_objects", got.alloc_objects, site.values.alloc_objects,
                 var.alloc_objects);
    *live_truth += site.values.inuse_space;
    *live_variance += var.inuse_space;
  }
}

std::vector<std::string> Names(const std::vector<ExpectedSite>& sites) {
  std::vector<std::string> names;
  for (const ExpectedSite& s : sites) names.push_back(s.name);
  return names;
}

class SampledTest : public E2eTest {
 protected:
  // Runs `program` sampled at `interval` (empty: heaprec's default) with `seed`, checks every
  // site and the profile's total live bytes. The total includes objects outside the sites (stdio
  // buffers and the like): their truth and variance come from an exact-mode run of the same
  // deterministic program.
  void CheckSampledRun(const std::vector<std::string>& program,
                       const std::vector<ExpectedSite>& sites, const std::string& interval,
                       double interval_bytes) {
    // Enough expected samples for the normal approximation, except for objects so large that
    // they are sampled with near certainty (then Var ~ 0 and the estimate must be exact).
    for (const ExpectedSite& site : sites) {
      bool certain = std::all_of(site.live.begin(), site.live.end(), [&](const Group& g) {
        return SampleProbability(g.size, interval_bytes) > 0.999;
      });
      if (!site.live.empty() && !certain) {
        ASSERT_GE(ExpectedLiveSamples(site, interval_bytes), 30)
            << site.name << ": volume too small";
      }
    }
    // HEAPREC_E2E_SEED overrides the seed, to explore other sample draws by hand.
    const char* seed = std::getenv("HEAPREC_E2E_SEED");
    std::vector<std::string> flags = {"--seed", seed != nullptr ? seed : "12345"};
    if (!interval.empty()) flags.insert(flags.end(), {"--sample-interval", interval});
    Profiled(flags, program);
    Profile profile = OnlyProfile();
    EXPECT_EQ(CommentValue(profile, "sample_interval"), static_cast<int64_t>(interval_bytes));
    EXPECT_EQ(CommentValue(profile, "dropped"), 0);
    double live_truth = 0, live_variance = 0;
    CheckSites(profile, sites, interval_bytes, &live_truth, &live_variance);

    // The rest of the heap, measured exactly.
    TempDir exact_dir;
    RunResult exact = HeaprecRun(exact_dir.path(), {"--sample-interval", "1"}, program);
    ASSERT_EQ(exact.status, 0) << exact.err;
    std::vector<std::string> exact_files = ListProfiles(exact_dir.path());
    ASSERT_EQ(exact_files.size(), 1u);
    for (const ObjectGroup& g : OtherLiveGroups(ReadProfileFile(exact_files[0]), Names(sites))) {
      live_truth += static_cast<double>(g.objects * g.size);
      live_variance += SampledBytesVariance(g.objects, g.size, interval_bytes);
    }
    ExpectWithin("total inuse_space", TotalValues(profile).inuse_space, live_truth, live_variance);
  }
};

// 512 KiB: 32768 objects of ~1000 bytes per site (~32 MB, ~62 expected samples; 31 for the
// half-freed site), 65536 churned 500-byte objects.
TEST_F(SampledTest, CSitesAtTheDefaultInterval) {
  constexpr long kCount = 32768, kChurn = 65536;
  CheckSampledRun({WL_C_SITES, std::to_string(kCount), std::to_string(kChurn)},
                  CSites(kCount, kChurn), "", kDefaultInterval);
}

// 64 KiB: 4096 objects per site (~4 MB, ~62 expected samples).
TEST_F(SampledTest, CSitesAt64KiB) {
  constexpr long kCount = 4096, kChurn = 8192;
  CheckSampledRun({WL_C_SITES, std::to_string(kCount), std::to_string(kChurn)},
                  CSites(kCount, kChurn), "64K", 64 * 1024);
}

// The containers' final buffers (1 MiB and ~1.9 MiB) are far above the interval: p ~ 1, so they
// must come out exact (up to rounding).
TEST_F(SampledTest, CxxSitesAt64KiB) {
  constexpr long kCount = 4096, kChurn = 8192, kVector = 1 << 17, kString = 1 << 20;
  CheckSampledRun({WL_CXX_SITES, std::to_string(kCount), std::to_string(kChurn),
                   std::to_string(kVector), std::to_string(kString)},
                  CxxSites(kCount, kChurn, kVector, kString), "64K", 64 * 1024);
}

// 4 threads; site_thread_alloc keeps 4 x 1024 objects of ~1000 bytes (~62 expected samples).
TEST_F(SampledTest, ThreadsAt64KiB) {
  constexpr long kThreads = 4, kPerThread = 2048;
  CheckSampledRun({WL_THREADS, std::to_string(kThreads), std::to_string(kPerThread)},
                  ThreadSites(kThreads, kPerThread), "64K", 64 * 1024);
}

// HEAPREC_SEED makes sampling deterministic for a deterministic single-threaded program, and a
// different seed samples differently.
TEST_F(SampledTest, FixedSeedIsReproducible) {
  const std::vector<std::string> program = {WL_C_SITES, "1024", "2048"};
  const std::vector<ExpectedSite> sites = CSites(1024, 2048);
  auto run = [&](const std::string& seed) {
    TempDir dir;
    RunResult r = HeaprecRun(dir.path(), {"--sample-interval", "64K", "--seed", seed}, program);
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<std::string> files = ListProfiles(dir.path());
    std::vector<Values> values;
    if (files.size() != 1) {
      ADD_FAILURE() << "expected one profile";
      return values;
    }
    Profile profile = ReadProfileFile(files[0]);
    for (const ExpectedSite& site : sites) values.push_back(SiteValues(profile, site.name));
    values.push_back(TotalValues(profile));
    return values;
  };
  std::vector<Values> first = run("42"), second = run("42"), other = run("43");
  EXPECT_EQ(first, second);
  EXPECT_NE(first, other);
}

// 20 runs with seeds 1..20 of a small workload (1 MB per site, ~16 expected samples per site per
// run, ~320 over all runs): the mean estimate of every site is within 5 sigma of the truth, sigma
// = sqrt(Var / 20).
TEST_F(SampledTest, MeanOverSeedsIsUnbiased) {
  constexpr int kRuns = 20;
  constexpr double kInterval = 64 * 1024;
  constexpr long kCount = 1024, kChurn = 2048;
  const std::vector<ExpectedSite> sites = CSites(kCount, kChurn);
  std::vector<std::vector<Values>> results(kRuns);
  std::vector<std::string> errors(kRuns);
  auto worker = [&](int first) {
    for (int i = first; i < kRuns; i += 2) {
      TempDir dir;
      RunResult r =
          HeaprecRun(dir.path(), {"--sample-interval", "64K", "--seed", std::to_string(i + 1)},
                     {WL_C_SITES, std::to_string(kCount), std::to_string(kChurn)});
      std::vector<std::string> files = ListProfiles(dir.path());
      if (r.status != 0 || files.size() != 1) {
        errors[i] = "run " + std::to_string(i) + " failed: " + r.err;
        continue;
      }
      Profile profile = ReadProfileFile(files[0]);
      for (const ExpectedSite& site : sites) results[i].push_back(SiteValues(profile, site.name));
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  for (const std::string& e : errors) ASSERT_EQ(e, "");

  for (size_t s = 0; s < sites.size(); ++s) {
    const ExpectedSite& site = sites[s];
    Variances var = SiteVariances(site, kInterval);
    double inuse_space = 0, alloc_space = 0, inuse_objects = 0;
    std::map<int64_t, int> distinct;
    for (int i = 0; i < kRuns; ++i) {
      inuse_space += results[i][s].inuse_space;
      inuse_objects += results[i][s].inuse_objects;
      alloc_space += results[i][s].alloc_space;
      ++distinct[results[i][s].alloc_space];
    }
    ExpectWithin(site.name + " mean inuse_space", inuse_space / kRuns, site.values.inuse_space,
                 var.inuse_space, kRuns);
    ExpectWithin(site.name + " mean inuse_objects", inuse_objects / kRuns,
                 site.values.inuse_objects, var.inuse_objects, kRuns);
    ExpectWithin(site.name + " mean alloc_space", alloc_space / kRuns, site.values.alloc_space,
                 var.alloc_space, kRuns);
    // Different seeds must actually sample differently.
    EXPECT_GT(distinct.size(), 1u) << site.name;
  }
}

}  // namespace
}  // namespace heaprec::e2e
