// heaprec_push on its own: the rules of the ingest request (each from Pyroscope's documentation or
// source, docs/design/push.md), the ledger's file, and the pusher on a scripted transport.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "profile/pprof_writer.h"
#include "push/ingest.h"
#include "push/ledger.h"
#include "push/pusher.h"

namespace heaprec::push {
namespace {

std::string LabelError(const std::string& text) {
  Label label;
  return ParseLabel(text, &label);
}

TEST(IngestTest, LabelsFollowPrometheusNamesAndTheNameSyntax) {
  Label label;
  EXPECT_EQ(ParseLabel("service=checkout", &label), "");
  EXPECT_EQ(label, (Label{"service", "checkout"}));
  EXPECT_EQ(ParseLabel("_x9=1.2.3-rc1+build/5", &label), "");
  EXPECT_EQ(label.value, "1.2.3-rc1+build/5");
  EXPECT_EQ(ParseLabel("host=caf\xc3\xa9", &label), "");  // UTF-8
  EXPECT_NE(LabelError("service"), "");
  EXPECT_NE(LabelError("=x"), "");
  EXPECT_NE(LabelError("9x=1"), "");
  EXPECT_NE(LabelError("bad-name=1"), "");
  EXPECT_NE(LabelError("a.b=1"), "");  // labelset allows '.', Prometheus names do not
  EXPECT_NE(LabelError("__name__=x"), "");
  EXPECT_NE(LabelError("__anything=x"), "");
  EXPECT_NE(LabelError("service_name=x"), "");
  EXPECT_NE(LabelError("pyroscope_spy=x"), "");
  EXPECT_NE(LabelError("k="), "");
  EXPECT_NE(LabelError("k=a,b"), "");
  EXPECT_NE(LabelError("k=a}"), "");
  EXPECT_NE(LabelError("k={a"), "");
  EXPECT_NE(LabelError("k=a=b"), "");
  EXPECT_NE(LabelError("k= a"), "");
  EXPECT_NE(LabelError("k=a\tb"), "");
  EXPECT_NE(LabelError("k=\xff"), "");
  EXPECT_NE(LabelError("k=\xc3"), "");  // truncated sequence
  EXPECT_NE(LabelError(std::string(1025, 'k') + "=v"), "");
  EXPECT_NE(LabelError("k=" + std::string(2049, 'v')), "");
  EXPECT_EQ(LabelError("k=" + std::string(2048, 'v')), "");
}

TEST(IngestTest, LabelSetsHaveNoDuplicatesAndFitTheSeriesLimit) {
  EXPECT_EQ(CheckLabels({{"a", "1"}, {"b", "2"}}), "");
  EXPECT_NE(CheckLabels({{"a", "1"}, {"a", "2"}}), "");
  std::vector<Label> many;
  for (std::size_t i = 0; i < kMaxUserLabels; ++i) many.push_back({"l" + std::to_string(i), "v"});
  EXPECT_EQ(CheckLabels(many), "");
  many.push_back({"one_more", "v"});
  EXPECT_NE(CheckLabels(many), "");
}

TEST(IngestTest, AppNamesAreLabelsetServiceNames) {
  EXPECT_EQ(CheckAppName("my-app.server/v2_x"), "");
  EXPECT_NE(CheckAppName(""), "");
  EXPECT_NE(CheckAppName("my app"), "");
  EXPECT_NE(CheckAppName("a{b}"), "");
  EXPECT_NE(CheckAppName("a,b"), "");
  EXPECT_EQ(SanitizeAppName("g++ -O2"), "g___-O2");
}

TEST(IngestTest, TheNameParameterAndTheUrl) {
  EXPECT_EQ(IngestName("app", {}), "app{}");
  EXPECT_EQ(IngestName("app", {{"env", "prod"}, {"host", "a1"}}), "app{env=prod,host=a1}");
  EXPECT_EQ(IngestUrl("http://h:4040", "app{env=prod}", 1700000000, 1700000001),
            "http://h:4040/ingest?name=app%7Benv%3Dprod%7D&from=1700000000&until=1700000001"
            "&format=pprof");
  EXPECT_EQ(IngestUrl("https://u:p@h/prefix/", "a{}", 1, 2),
            "https://u:p@h/prefix/ingest?name=a%7B%7D&from=1&until=2&format=pprof");
  EXPECT_EQ(IngestUrl("http://h/ingest", "a{}", 1, 2),
            "http://h/ingest?name=a%7B%7D&from=1&until=2"
            "&format=pprof");
  EXPECT_EQ(PercentEncode("a b/é~"), "a%20b%2F%C3%A9~");
  EXPECT_EQ(RedactedUrl("https://user:secret@h:1/x"), "https://***@h:1/x");
  EXPECT_EQ(RedactedUrl("http://h/a@b"), "http://h/a@b");
}

TEST(IngestTest, ASnapshotCoversTheSecondItFallsIn) {
  TimeRange r = SnapshotRange(1700000000'999999999);
  EXPECT_EQ(r.from, 1700000000);
  EXPECT_EQ(r.until, 1700000001);
  r = SnapshotRange(1700000000'000000000);
  EXPECT_EQ(r.from, 1700000000);
  EXPECT_EQ(r.until, 1700000001);
}

TEST(IngestTest, StatusesAreAcceptedRetriedOrRejected) {
  EXPECT_EQ(Classify(200), Outcome::kAccepted);
  EXPECT_EQ(Classify(204), Outcome::kAccepted);
  EXPECT_EQ(Classify(0), Outcome::kRetry);
  EXPECT_EQ(Classify(408), Outcome::kRetry);
  EXPECT_EQ(Classify(429), Outcome::kRetry);
  EXPECT_EQ(Classify(500), Outcome::kRetry);
  EXPECT_EQ(Classify(503), Outcome::kRetry);
  EXPECT_EQ(Classify(400), Outcome::kRejected);
  EXPECT_EQ(Classify(401), Outcome::kRejected);
  EXPECT_EQ(Classify(413), Outcome::kRejected);
  EXPECT_EQ(Classify(422), Outcome::kRejected);
  EXPECT_EQ(Classify(301), Outcome::kRejected);
}

TEST(IngestTest, RetryDelaysDoubleUpToTheCapWithJitter) {
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(1, 1, 60, 0.999999), 0.9999995);
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(1, 1, 60, 0), 0.5);
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(2, 1, 60, 0), 1);
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(3, 1, 60, 0), 2);
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(7, 1, 60, 0), 30);  // 64 capped at 60, halved
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(1000, 1, 60, 0), 30);
  for (double r : {0.0, 0.3, 0.99}) {
    double d = RetryDelaySeconds(4, 1, 60, r);
    EXPECT_GE(d, 4.0);
    EXPECT_LT(d, 8.0);
  }
}

TEST(IngestTest, WhichFilesArePushed) {
  EXPECT_TRUE(IsCompleteProfileName("heaprec.app.12.pb.gz"));
  EXPECT_TRUE(IsCompleteProfileName("heaprec.app.12.0003.pb.gz"));
  EXPECT_TRUE(IsCompleteProfileName("heaprec.app.12-2.pb.gz"));
  EXPECT_FALSE(IsCompleteProfileName("heaprec.app.12.pb.gz.tmp.12.1"));
  EXPECT_FALSE(IsCompleteProfileName("heaprec.app.12.pb.gz.tmp.12.1.pb.gz"));
  EXPECT_FALSE(IsCompleteProfileName(".heaprec-pushed"));
  EXPECT_FALSE(IsCompleteProfileName(".pb.gz"));
  EXPECT_FALSE(IsCompleteProfileName("heap.json"));
  EXPECT_TRUE(IsPeakProfile("heaprec.app.12.peak.pb.gz"));
  EXPECT_TRUE(IsPeakProfile("heaprec.app.12.peak-2.pb.gz"));
  EXPECT_FALSE(IsPeakProfile("heaprec.app.12.pb.gz"));
  EXPECT_EQ(FinalNameOfPeak("heaprec.app.12.peak.pb.gz"), "heaprec.app.12.pb.gz");
  EXPECT_EQ(FinalNameOfPeak("heaprec.app.12.peak-2.pb.gz"), "heaprec.app.12.pb.gz");
}

TEST(IngestTest, AppNamesFromFileNames) {
  EXPECT_EQ(AppNameFromFileName("/d/heaprec.server.1234.pb.gz"), "server");
  EXPECT_EQ(AppNameFromFileName("heaprec.server.1234.0007.pb.gz"), "server");
  EXPECT_EQ(AppNameFromFileName("heaprec.server.1234.peak.pb.gz"), "server");
  EXPECT_EQ(AppNameFromFileName("heaprec.python3.11.1234-2.pb.gz"), "python3");
  EXPECT_EQ(AppNameFromFileName("/var/tmp/heap/api.99.pb.gz"), "api");
  EXPECT_EQ(AppNameFromFileName("my app.1.pb.gz"), "my_app");
  EXPECT_EQ(AppNameFromFileName("1234.pb.gz"), "heaprec");
}

// A fresh directory, removed with its contents at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "heaprec-push-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A heap profile with heaprec's four sample types, symbolized (nothing for the pusher to add).
std::string HeapProfile(std::int64_t time_nanos) {
  profile::Profile p;
  p.sample_types = {{"alloc_objects", "count"},
                    {"alloc_space", "bytes"},
                    {"inuse_objects", "count"},
                    {"inuse_space", "bytes"}};
  p.functions = {{.id = 1, .name = "main"}};
  p.locations = {{.id = 1, .address = 0x1000, .lines = {{.function_id = 1, .line = 3}}}};
  p.samples = {{.location_ids = {1}, .values = {1, 64, 1, 64}}};
  p.time_nanos = time_nanos;
  p.period_type = {"space", "bytes"};
  p.period = 524288;
  return profile::EncodeProfile(p, true);
}

TEST(LedgerTest, RemembersAcrossInstancesAndForgetsChangedOrRemovedFiles) {
  TempDir dir;
  WriteFile(dir / "a.pb.gz", "aaaa");
  WriteFile(dir / "b.pb.gz", "bb");
  WriteFile(dir / "c.pb.gz", "c");
  {
    Ledger ledger;
    EXPECT_EQ(ledger.Lookup(Identify(dir / "a.pb.gz")), FileState::kUnknown);
    EXPECT_EQ(ledger.Record(Identify(dir / "a.pb.gz"), FileState::kAccepted), "");
    EXPECT_EQ(ledger.Record(Identify(dir / "b.pb.gz"), FileState::kRejected), "");
    EXPECT_EQ(ledger.Record(Identify(dir / "c.pb.gz"), FileState::kAccepted), "");
  }
  std::filesystem::remove(dir / "c.pb.gz");
  WriteFile(dir / "b.pb.gz", "bbb");  // rewritten: another file under the same name
  {
    Ledger ledger;
    EXPECT_EQ(ledger.Lookup(Identify(dir / "a.pb.gz")), FileState::kAccepted);
    EXPECT_EQ(ledger.Lookup(Identify(dir / "b.pb.gz")), FileState::kUnknown);
    EXPECT_EQ(ledger.Record(Identify(dir / "a.pb.gz"), FileState::kAccepted), "");
  }
  std::string text = ReadFile(dir / kLedgerName);
  EXPECT_NE(text.find("accepted\t4\t"), std::string::npos) << text;
  EXPECT_EQ(text.find("c.pb.gz"), std::string::npos)
      << "a removed file's line is dropped: " << text;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos);
  }
}

TEST(LedgerTest, RefreshFollowsARewriteByHeaprecItself) {
  TempDir dir;
  WriteFile(dir / "a.pb.gz", "aaaa");
  Ledger ledger;
  ASSERT_EQ(ledger.Record(Identify(dir / "a.pb.gz"), FileState::kAccepted), "");
  WriteFile(dir / "a.pb.gz", "aaaaaaaa");  // symbols added
  EXPECT_EQ(ledger.Refresh(dir / "a.pb.gz"), "");
  EXPECT_EQ(Ledger().Lookup(Identify(dir / "a.pb.gz")), FileState::kAccepted);
}

// A ledger that cannot be written (here a directory in its place) is a message naming it; what was
// recorded is still known to this ledger.
TEST(LedgerTest, ALedgerThatCannotBeWrittenIsReportedAndKeptInMemory) {
  TempDir dir;
  WriteFile(dir / "a.pb.gz", "aaaa");
  ASSERT_TRUE(std::filesystem::create_directory(dir / kLedgerName));
  Ledger ledger;
  EXPECT_EQ(ledger.Record(Identify(dir / "a.pb.gz"), FileState::kAccepted),
            "cannot write " + (dir / kLedgerName) + ": rename failed: " + std::strerror(EISDIR));
  EXPECT_EQ(ledger.Lookup(Identify(dir / "a.pb.gz")), FileState::kAccepted);
}

// Answers each Post with the next scripted response, and records the requests.
class ScriptedTransport : public Transport {
 public:
  std::deque<Response> script;
  std::vector<std::string> urls;
  std::vector<std::vector<std::string>> headers;
  Response Post(const std::string& url, const std::vector<std::string>& h,
                const std::string&) override {
    urls.push_back(url);
    headers.push_back(h);
    if (script.empty()) return {200, ""};
    Response r = script.front();
    script.pop_front();
    return r;
  }
};

PushConfig TestConfig() {
  PushConfig config;
  config.server = "http://127.0.0.1:9";
  config.app = "app";
  config.labels = {{"env", "test"}};
  config.headers = {"X-Scope-OrgID: t1"};
  config.retry_initial_seconds = 1;
  config.symbolize = false;
  return config;
}

TEST(PusherTest, RetriesWithGrowingDelaysThenRecordsTheAcceptance) {
  TempDir dir;
  WriteFile(dir / "p.1.pb.gz", HeapProfile(1700000000'500000000));
  ScriptedTransport transport;
  transport.script = {{0, "Connection refused"}, {503, "busy"}};
  Ledger ledger;
  std::ostringstream log;
  Pusher pusher(TestConfig(), &transport, &ledger, &log);
  EXPECT_TRUE(pusher.Offer(dir / "p.1.pb.gz"));
  EXPECT_FALSE(pusher.Offer(dir / "p.1.pb.gz")) << "queued once";
  double next = pusher.Step(100);
  EXPECT_GE(next, 100.5);
  EXPECT_LT(next, 101);
  EXPECT_EQ(pusher.Step(next - 0.01), next) << "nothing is sent before it is due";
  EXPECT_EQ(transport.urls.size(), 1u);
  double second = pusher.Step(next);
  EXPECT_GE(second, next + 1);
  EXPECT_LT(second, next + 2);
  EXPECT_EQ(pusher.Step(second), std::numeric_limits<double>::infinity());
  ASSERT_EQ(transport.urls.size(), 3u);
  EXPECT_EQ(pusher.accepted(), 1u);
  EXPECT_EQ(pusher.queued(), 0u);
  EXPECT_TRUE(pusher.NotAccepted().empty());
  EXPECT_EQ(transport.urls[0],
            "http://127.0.0.1:9/ingest?name=app%7Benv%3Dtest%7D&from=1700000000&until=1700000001"
            "&format=pprof");
  EXPECT_EQ(transport.headers[0], std::vector<std::string>{"X-Scope-OrgID: t1"});
  EXPECT_EQ(Ledger().Lookup(Identify(dir / "p.1.pb.gz")), FileState::kAccepted);
  EXPECT_NE(log.str().find("Connection refused"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("HTTP 503: busy"), std::string::npos) << log.str();
  Pusher again(TestConfig(), &transport, &ledger, &log);
  EXPECT_FALSE(again.Offer(dir / "p.1.pb.gz")) << "accepted once: not pushed again";
}

TEST(PusherTest, ARefusalIsFinalAndRecorded) {
  TempDir dir;
  WriteFile(dir / "p.1.pb.gz", HeapProfile(1700000000'000000000));
  ScriptedTransport transport;
  transport.script = {{400, "invalid labels"}};
  Ledger ledger;
  std::ostringstream log;
  Pusher pusher(TestConfig(), &transport, &ledger, &log);
  pusher.Offer(dir / "p.1.pb.gz");
  EXPECT_EQ(pusher.Step(0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(transport.urls.size(), 1u);
  EXPECT_EQ(pusher.rejected(), 1u);
  ASSERT_EQ(pusher.NotAccepted().size(), 1u);
  EXPECT_NE(pusher.NotAccepted()[0].find("HTTP 400: invalid labels"), std::string::npos);
  EXPECT_EQ(Ledger().Lookup(Identify(dir / "p.1.pb.gz")), FileState::kRejected);
  EXPECT_TRUE(std::filesystem::exists(dir / "p.1.pb.gz")) << "kept on disk";
}

TEST(PusherTest, AFileThatCannotBeReadIsNotPushed) {
  TempDir dir;
  ScriptedTransport transport;
  Ledger ledger;
  std::ostringstream log;
  Pusher pusher(TestConfig(), &transport, &ledger, &log);
  pusher.Offer(dir / "gone.pb.gz");  // removed since it was seen
  EXPECT_EQ(pusher.Step(0), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(transport.urls.empty());
  EXPECT_EQ(pusher.rejected(), 1u);
  EXPECT_EQ(log.str(), "heaprec: not pushed: cannot open " + (dir / "gone.pb.gz") + ": " +
                           std::strerror(ENOENT) + "; kept on disk\n");
}

TEST(PusherTest, AStopRequestEndsTheStepBeforeTheNextRequest) {
  TempDir dir;
  WriteFile(dir / "p.1.pb.gz", HeapProfile(1700000000'000000000));
  WriteFile(dir / "p.2.pb.gz", HeapProfile(1700000001'000000000));
  ScriptedTransport transport;
  Ledger ledger;
  std::ostringstream log;
  Pusher pusher(TestConfig(), &transport, &ledger, &log);
  pusher.Offer(dir / "p.1.pb.gz");
  pusher.Offer(dir / "p.2.pb.gz");
  EXPECT_EQ(pusher.Step(0, [&] { return transport.urls.size() == 1; }), 0);
  EXPECT_EQ(transport.urls.size(), 1u);
  EXPECT_EQ(pusher.queued(), 1u);
  EXPECT_EQ(pusher.NotAccepted(), std::vector<std::string>{dir / "p.2.pb.gz (not sent yet)"});
}

TEST(PusherTest, AFileThatIsNotAProfileIsNeverSent) {
  TempDir dir;
  WriteFile(dir / "junk.pb.gz", "not a profile");
  ScriptedTransport transport;
  Ledger ledger;
  std::ostringstream log;
  Pusher pusher(TestConfig(), &transport, &ledger, &log);
  pusher.Offer(dir / "junk.pb.gz");
  pusher.Step(0);
  EXPECT_TRUE(transport.urls.empty());
  EXPECT_EQ(pusher.rejected(), 1u);
  EXPECT_NE(log.str().find("junk.pb.gz"), std::string::npos) << log.str();
}

TEST(PusherTest, WithoutAnAppNameTheFileNamesIt) {
  TempDir dir;
  WriteFile(dir / "heaprec.checkout.42.pb.gz", HeapProfile(1700000000'000000000));
  ScriptedTransport transport;
  Ledger ledger;
  std::ostringstream log;
  PushConfig config = TestConfig();
  config.app = "";
  config.labels = {};
  Pusher pusher(config, &transport, &ledger, &log);
  pusher.Offer(dir / "heaprec.checkout.42.pb.gz");
  pusher.Step(0);
  ASSERT_EQ(transport.urls.size(), 1u);
  EXPECT_NE(transport.urls[0].find("name=checkout%7B%7D&"), std::string::npos) << transport.urls[0];
}

}  // namespace
}  // namespace heaprec::push
