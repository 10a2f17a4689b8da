// `heaprec run --push` and `heaprec agent` end to end, over real HTTP on loopback, against
// pyroscope_receiver.py: a stand-in for Pyroscope's /ingest that checks every request against the
// rules Pyroscope documents and implements (docs/design/push.md) and answers 400 "violation" to
// any request that breaks one. No Pyroscope server runs on the test machines.
//
// HEAPREC_PUSH_RETRY_SECONDS=0.05 shortens the first retry delay (1 s otherwise) so that the
// retried runs take a fraction of a second.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "e2e_util.h"

namespace heaprec::e2e {
namespace {

const EnvChanges kFastRetries = {{"HEAPREC_PUSH_RETRY_SECONDS", "0.05"}};

// One request as the receiver logged it: its JSON line, searched with regexes (the receiver writes
// json.dumps with its default separators).
struct Request {
  std::string line;
  std::string Field(const std::string& name) const {
    std::smatch m;
    std::regex number("\"" + name + "\": (-?[0-9]+|null|\"[^\"]*\")");
    if (!std::regex_search(line, m, number)) return "<missing>";
    std::string value = m[1];
    if (!value.empty() && value[0] == '"') value = value.substr(1, value.size() - 2);
    return value;
  }
};

// The receiver, on an ephemeral port, for the whole test.
class Receiver {
 public:
  Receiver(const std::string& dir, std::vector<std::string> flags = {})
      : log_(dir + "/requests.jsonl"), work_(dir + "/receiver") {
    std::filesystem::create_directories(work_);
    BackgroundOptions options;
    options.argv = {"/usr/bin/python3", PYROSCOPE_RECEIVER, log_};
    options.argv.insert(options.argv.end(), flags.begin(), flags.end());
    options.cwd = work_;
    process_ = std::make_unique<BackgroundProcess>(options);
    port_ = process_->WaitUntilReady("ready");
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  bool up() const { return port_ > 0; }
  std::vector<Request> Requests() const {
    std::vector<Request> requests;
    for (const std::string& line : Lines(ReadFile(log_))) requests.push_back({line});
    return requests;
  }
  std::string Stderr() const { return process_->Stderr(); }

 private:
  std::string log_, work_;
  std::unique_ptr<BackgroundProcess> process_;
  int port_ = -1;
};

// A loopback port nothing listens on: bound, then closed, so the kernel just handed it out and
// connections to it are refused.
int RefusedPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

std::vector<std::string> Matching(const std::string& text, const std::string& needle) {
  std::vector<std::string> found;
  for (const std::string& line : Lines(text)) {
    if (line.find(needle) != std::string::npos) found.push_back(line);
  }
  return found;
}

RunResult Agent(const std::string& dir, const std::vector<std::string>& flags,
                const EnvChanges& env = kFastRetries) {
  std::vector<std::string> argv = {HEAPREC_BIN, "agent", dir};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return RunProgram(argv, dir, env, 60);
}

TEST(PushE2eTest, RunPushesEveryProfileAsWrittenWithItsLabels) {
  TempDir dir;
  Receiver receiver(dir.path());
  ASSERT_TRUE(receiver.up()) << receiver.Stderr();
  RunResult r = HeaprecRun(dir.path(),
                           {"--dump-interval", "0.05", "--push", receiver.url(), "--app",
                            "checkout", "--label", "env=staging", "--label", "version=1.2.3",
                            "--push-header", "X-Scope-OrgID: team-a", "--top", "0"},
                           {"/bin/sleep", "0.4"}, kFastRetries);
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<std::string> profiles = ListProfiles(dir.path());
  ASSERT_GE(profiles.size(), 3u) << "interval dumps and the final profile";
  std::vector<Request> requests = receiver.Requests();
  ASSERT_EQ(requests.size(), profiles.size()) << r.err;
  std::set<std::string> bodies;
  for (const Request& q : requests) {
    EXPECT_EQ(q.Field("status"), "200") << q.line;
    EXPECT_EQ(q.Field("app"), "checkout") << q.line;
    EXPECT_NE(q.line.find("\"labels\": {\"env\": \"staging\", \"version\": \"1.2.3\"}"),
              std::string::npos)
        << q.line;
    EXPECT_EQ(q.Field("org_id"), "team-a") << q.line;
    bodies.insert(q.Field("body_sha256"));
  }
  EXPECT_EQ(bodies.size(), requests.size()) << "each profile once";
  EXPECT_EQ(Matching(r.err, "heaprec: pushed " + std::to_string(profiles.size()) + " profiles to " +
                                receiver.url())
                .size(),
            1u)
      << r.err;
  EXPECT_TRUE(Matching(r.err, "not pushed").empty()) << r.err;
  // The ledger lists them all as accepted: an agent on this directory sends nothing again.
  RunResult again = Agent(dir.path(), {"--once", "--push", receiver.url()});
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(receiver.Requests().size(), requests.size()) << again.err;
}

TEST(PushE2eTest, A503IsRetriedAndTheProfileAcceptedOnce) {
  TempDir dir;
  Receiver receiver(dir.path(), {"--fail-first", "2"});
  ASSERT_TRUE(receiver.up()) << receiver.Stderr();
  RunResult r =
      HeaprecRun(dir.path(), {"--push", receiver.url(), "--top", "0"}, {"/bin/true"}, kFastRetries);
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(ListProfiles(dir.path()).size(), 1u);
  std::vector<Request> requests = receiver.Requests();
  ASSERT_EQ(requests.size(), 3u) << r.err;
  EXPECT_EQ(requests[0].Field("status"), "503");
  EXPECT_EQ(requests[1].Field("status"), "503");
  EXPECT_EQ(requests[2].Field("status"), "200");
  EXPECT_EQ(requests[2].Field("app"), "true") << "the program's name by default";
  EXPECT_EQ(requests[0].Field("body_sha256"), requests[2].Field("body_sha256"));
  EXPECT_EQ(Matching(r.err, "HTTP 503").size(), 1u) << "one line, not one per attempt: " << r.err;
  EXPECT_EQ(Matching(r.err, "heaprec: pushed 1 profile to").size(), 1u) << r.err;
}

TEST(PushE2eTest, ADeadServerChangesNothingForTheProgramAndTheAgentPushesLater) {
  TempDir dir;
  std::string dead = "http://127.0.0.1:" + std::to_string(RefusedPort());
  double started = MonotonicSeconds();
  RunResult r = HeaprecRun(dir.path(),
                           {"--dump-interval", "0.1", "--push", dead, "--push-timeout", "0.5",
                            "--app", "svc", "--label", "env=ci", "--top", "0"},
                           {"/bin/sh", "-c", "sleep 0.25; echo out; exit 3"}, kFastRetries);
  double took = MonotonicSeconds() - started;
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.out, "out\n");
  EXPECT_LT(took, 5.0) << "bounded by --push-timeout, not by the retries";
  std::vector<std::string> profiles = ListProfiles(dir.path());
  ASSERT_GE(profiles.size(), 2u);
  std::vector<std::string> kept = Matching(r.err, "; kept on disk");
  EXPECT_EQ(kept.size(), profiles.size()) << r.err;
  for (const std::string& line : kept) EXPECT_EQ(line.rfind("heaprec: not pushed: ", 0), 0u);
  EXPECT_EQ(Matching(r.err, "heaprec: push them later with: heaprec agent " + dir.path() +
                                " --once --push " + dead + " --app svc --label env=ci")
                .size(),
            1u)
      << r.err;
  for (const std::string& file : profiles) EXPECT_TRUE(std::filesystem::exists(file));

  Receiver receiver(dir.path());
  ASSERT_TRUE(receiver.up()) << receiver.Stderr();
  RunResult agent =
      Agent(dir.path(), {"--once", "--push", receiver.url(), "--app", "svc", "--label", "env=ci"});
  EXPECT_EQ(agent.status, 0) << agent.err;
  std::vector<Request> requests = receiver.Requests();
  ASSERT_EQ(requests.size(), profiles.size()) << agent.err;
  for (const Request& q : requests) {
    EXPECT_EQ(q.Field("status"), "200") << q.line;
    EXPECT_EQ(q.Field("app"), "svc") << q.line;
  }
  // A restarted agent sends nothing twice.
  RunResult restarted = Agent(dir.path(), {"--once", "--push", receiver.url(), "--app", "svc"});
  EXPECT_EQ(restarted.status, 0) << restarted.err;
  EXPECT_EQ(receiver.Requests().size(), requests.size()) << restarted.err;
  for (const std::string& file : profiles) EXPECT_TRUE(std::filesystem::exists(file));
}

TEST(PushE2eTest, ARefusalIsReportedOnceAndNotRetried) {
  TempDir dir;
  Receiver receiver(dir.path(), {"--reject"});
  ASSERT_TRUE(receiver.up()) << receiver.Stderr();
  double started = MonotonicSeconds();
  RunResult r =
      HeaprecRun(dir.path(), {"--push", receiver.url(), "--push-timeout", "30", "--top", "0"},
                 {"/bin/true"}, kFastRetries);
  EXPECT_LT(MonotonicSeconds() - started, 10.0) << "a 400 is final: no waiting for the timeout";
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(receiver.Requests().size(), 1u);
  EXPECT_EQ(Matching(r.err, "refused by the server, HTTP 400: rejected by test").size(), 2u)
      << "once when refused, once in the list of what was not pushed: " << r.err;
  // The agent knows it was refused and does not send it again.
  RunResult agent = Agent(dir.path(), {"--once", "--push", receiver.url()});
  EXPECT_EQ(agent.status, 0) << agent.err;
  EXPECT_EQ(receiver.Requests().size(), 1u) << agent.err;
  EXPECT_EQ(ListProfiles(dir.path()).size(), 1u) << "kept on disk";
}

TEST(PushE2eTest, TheAgentRunsUntilSigtermAndPushesNewProfiles) {
  TempDir dir;
  Receiver receiver(dir.path());
  ASSERT_TRUE(receiver.up()) << receiver.Stderr();
  std::string watched = dir / "heap";
  std::filesystem::create_directories(watched);
  BackgroundOptions options;
  // Basic auth from the URL's user:password@, which the log lines must not show.
  std::string url = "http://user:secret@" + receiver.url().substr(std::string("http://").size());
  options.argv = {HEAPREC_BIN, "agent", watched, "--push", url, "--label", "host=h1"};
  options.cwd = dir.path();
  options.env = kFastRetries;
  BackgroundProcess agent(options);
  // A service under a supervisor, writing into the watched directory itself.
  RunResult service = HeaprecRun(watched, {"--top", "0", "--no-symbolize"}, {"/bin/true"});
  ASSERT_EQ(service.status, 0) << service.err;
  double deadline = MonotonicSeconds() + 20;
  while (receiver.Requests().empty() && MonotonicSeconds() < deadline) usleep(20000);
  ASSERT_EQ(receiver.Requests().size(), 1u) << agent.Stderr();
  Request q = receiver.Requests()[0];
  EXPECT_EQ(q.Field("status"), "200") << q.line;
  EXPECT_EQ(q.Field("app"), "p") << "the file name's: p.PID.pb.gz";
  EXPECT_EQ(q.Field("authorization"), "Basic dXNlcjpzZWNyZXQ=") << q.line;
  kill(agent.pid(), SIGTERM);
  RunResult ended = agent.Wait();
  EXPECT_EQ(ended.status, 0) << ended.err;
  EXPECT_EQ(Matching(ended.err, "heaprec agent: pushed " + watched + "/").size(), 1u) << ended.err;
  EXPECT_EQ(Matching(ended.err, "heaprec agent: stopping; pushed 1, 0 waiting").size(), 1u)
      << ended.err;
  EXPECT_EQ(ended.err.find("secret"), std::string::npos) << ended.err;
  EXPECT_EQ(Matching(ended.err, "to http://***@127.0.0.1:").size(), 1u) << ended.err;
}

// A peak profile is pushed only for a process that ended without a final profile: by `run` (from
// the manifest) and by the agent (no final profile beside it, its pid gone).
TEST(PushE2eTest, PeakProfilesOnlyForAProcessThatLeftNoFinalOne) {
  const std::string grow =
      "x = [bytearray(100000) for i in range(100)]; import time; "
      "time.sleep(0.2); ";
  TempDir dir;
  Receiver receiver(dir.path());
  ASSERT_TRUE(receiver.up()) << receiver.Stderr();
  RunResult normal = HeaprecRun(dir.path(), {"--push", receiver.url(), "--top", "0"},
                                {"/usr/bin/python3", "-c", grow + "print('done')"}, kFastRetries);
  EXPECT_EQ(normal.status, 0) << normal.err;
  ASSERT_EQ(ListProfiles(dir.path(), true).size(), 1u) << "the heap grew: a peak profile";
  EXPECT_EQ(receiver.Requests().size(), 1u) << "the final profile only: " << normal.err;

  RunResult killed = HeaprecRun(
      dir.path(), {"--push", receiver.url(), "--top", "0"},
      {"/usr/bin/python3", "-c", grow + "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"},
      kFastRetries);
  EXPECT_EQ(killed.status, 128 + SIGKILL) << killed.err;
  ASSERT_EQ(ListProfiles(dir.path(), true).size(), 2u);
  std::vector<Request> requests = receiver.Requests();
  ASSERT_EQ(requests.size(), 2u) << killed.err;
  EXPECT_EQ(requests[1].Field("status"), "200") << requests[1].line;

  // The agent on a copy of the directory without its ledger: the same choice.
  std::string copy = dir / "copy";
  std::filesystem::create_directories(copy);
  for (const std::string& file : ListProfiles(dir.path(), true)) {
    std::filesystem::copy_file(file, copy + "/" + std::filesystem::path(file).filename().string());
  }
  for (const std::string& file : ListProfiles(dir.path())) {
    std::filesystem::copy_file(file, copy + "/" + std::filesystem::path(file).filename().string());
  }
  RunResult agent = Agent(copy, {"--once", "--push", receiver.url()});
  EXPECT_EQ(agent.status, 0) << agent.err;
  EXPECT_EQ(receiver.Requests().size(), 4u)
      << "the final profile and the killed process's peak: " << agent.err;
  EXPECT_EQ(Matching(agent.err, "heaprec agent: pushed 2 profiles").size(), 1u) << agent.err;
}

// The receiver's checks are what the other tests rely on: it must refuse each request that breaks
// one rule (a wrong method, path, name, label, time, format, Content-Type, an ungzipped body, a
// sample type with '-') and accept the same profile sent right.
TEST(PushE2eTest, TheReceiverRefusesWhatPyroscopeWould) {
  TempDir dir;
  RunResult made = HeaprecRun(dir.path(), {"--top", "0"}, {"/bin/true"});
  ASSERT_EQ(made.status, 0) << made.err;
  std::vector<std::string> profiles = ListProfiles(dir.path());
  ASSERT_EQ(profiles.size(), 1u);
  RunResult r =
      RunProgram({"/usr/bin/python3", PYROSCOPE_RECEIVER, "--self-test", profiles[0]}, dir.path());
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "self-test: 17 refused, 1 accepted\n") << r.err;
}

TEST(PushE2eTest, ABadLabelIsOneUsageLineAndNothingRuns) {
  TempDir dir;
  RunResult r = HeaprecRun(dir.path(), {"--push", "http://127.0.0.1:9", "--label", "bad-name=x"},
                           {"/bin/sh", "-c", "echo ran"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "heaprec run: --label 'bad-name=x' is invalid: the label name has '-': only letters, "
            "digits and _ are allowed\n");
  RunResult agent =
      Agent(dir.path(), {"--push", "http://127.0.0.1:9", "--label", "service_name=x"});
  EXPECT_EQ(agent.status, 2);
  EXPECT_EQ(agent.err,
            "heaprec agent: --label 'service_name=x' is invalid: service_name is set from --app\n");
  RunResult url = Agent(dir.path(), {"--push", "ftp://h", "--once"});
  EXPECT_EQ(url.status, 2);
  EXPECT_EQ(Lines(url.err).size(), 1u) << url.err;
}

}  // namespace
}  // namespace heaprec::e2e
