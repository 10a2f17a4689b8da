// The heaprec executable's own errors and help (cli/command_line.h, cli/help_format.h): the exact
// line of each usage error, its exit status and stream; help pages without parser artefacts and
// with real examples; `heaprec help`; --version; and the one-line answers to files that are not
// heap profiles (profile/foreign_format.h), made by the real tools where they are installed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "preload/control/settings.h"
#include "render/flame_page.h"
#include "render/output_file.h"
#include "render/ui_page.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

using test_support::ShellQuote;

// Every command: the tests below go through each one's help.
const std::vector<std::string> kCommands = {"run",     "report", "summary", "symbolize", "fetch",
                                            "flame",   "ui",     "diff",    "leaks",     "agent",
                                            "recover", "attach", "detach",  "dump"};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

struct Result {
  int status = -1;
  std::string out;
  std::string err;
};

class CommandLineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_support::MakeTempDir();
    profile_ = dir_ + "/heap.pb.gz";
    render::WriteProfileFile(test_support::MakeReportProfile(), profile_);
  }

  // Runs heaprec with `args` (shell words), its stdout and stderr kept apart.
  Result Heaprec(const std::string& args) {
    Result r;
    std::string ignored;
    // In a subshell: RunCommand adds its own 2>&1, which must not override ours.
    r.status = test_support::RunCommand("(" + ShellQuote(HEAPREC_BINARY) + " " + args + " >" +
                                            ShellQuote(dir_ + "/out") + " 2>" +
                                            ShellQuote(dir_ + "/err") + ")",
                                        &ignored);
    r.out = ReadFile(dir_ + "/out");
    r.err = ReadFile(dir_ + "/err");
    return r;
  }

  // A usage error: status 2, nothing on stdout, exactly `line` on stderr.
  void ExpectUsageError(const std::string& args, const std::string& line) {
    Result r = Heaprec(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.err, line + "\n") << args;
    EXPECT_EQ(r.out, "") << args;
  }

  std::string dir_;
  std::string profile_;
};

TEST_F(CommandLineTest, UnknownCommandSuggestsTheClosest) {
  ExpectUsageError("rn",
                   "heaprec: unknown command \"rn\"; did you mean \"run\"? (heaprec --help lists "
                   "the commands)");
  ExpectUsageError("reprot " + ShellQuote(profile_),
                   "heaprec: unknown command \"reprot\"; did you mean \"report\"? (heaprec --help "
                   "lists the commands)");
  ExpectUsageError("bogus",
                   "heaprec: unknown command \"bogus\" (heaprec --help lists the commands)");
}

TEST_F(CommandLineTest, UnknownOptionSuggestsTheClosest) {
  const std::string file = " " + ShellQuote(profile_);
  ExpectUsageError("report --tpo 5" + file,
                   "heaprec report: unknown option --tpo; did you mean --top?");
  ExpectUsageError("report --tpo=5" + file,
                   "heaprec report: unknown option --tpo; did you mean --top?");
  // Before the missing FILE: the misspelt option is the likely cause.
  ExpectUsageError("report --tpo", "heaprec report: unknown option --tpo; did you mean --top?");
  ExpectUsageError("leaks --min-r3 0.9" + file,
                   "heaprec leaks: unknown option --min-r3; did you mean --min-r2?");
  ExpectUsageError("report --bogus" + file,
                   "heaprec report: unknown option --bogus (heaprec report --help lists the "
                   "options)");
  ExpectUsageError("run --sampel-interval 1 -- true",
                   "heaprec run: unknown option --sampel-interval; did you mean "
                   "--sample-interval?");
  ExpectUsageError("--bogus",
                   "heaprec: unknown option --bogus (heaprec --help lists the commands)");
  ExpectUsageError("--verison", "heaprec: unknown option --verison; did you mean --version?");
  // A command's option before the command.
  ExpectUsageError("--top 5 report" + file,
                   "heaprec: --top goes after the command (it is an option of run, report, "
                   "summary, diff and leaks: heaprec run --top ...)");
}

TEST_F(CommandLineTest, ValuesOfTheWrongKindAreSaidInWords) {
  const std::string file = " " + ShellQuote(profile_);
  ExpectUsageError("report --top x" + file, "heaprec report: --top expects a number, got \"x\"");
  ExpectUsageError("report --top=1.5" + file,
                   "heaprec report: --top expects a whole number, 0 or more, got \"1.5\"");
  ExpectUsageError("report --format xml" + file,
                   "heaprec report: --format expects text, json or folded, got \"xml\"");
  ExpectUsageError("report --format", "heaprec report: --format expects a value (--format FORMAT)");
  // A repeatable option takes one value per occurrence, and says so like any other.
  ExpectUsageError("agent /tmp --label",
                   "heaprec agent: --label expects a value (--label NAME=VALUE)");
  ExpectUsageError("report --binary-path",
                   "heaprec report: --binary-path expects a value (--binary-path DIR)");
  ExpectUsageError("diff --top many a b", "heaprec diff: --top expects a number, got \"many\"");
  ExpectUsageError("leaks --by line" + file,
                   "heaprec leaks: --by expects function or stack, got \"line\"");
  ExpectUsageError("leaks --chart-sites 20" + file,
                   "heaprec leaks: --chart-sites expects a number from 1 to 10, got \"20\"");
  ExpectUsageError("leaks --min-r2 2" + file,
                   "heaprec leaks: --min-r2 expects a number from 0 to 1, got \"2\"");
  ExpectUsageError("leaks --pid -3" + file,
                   "heaprec leaks: --pid expects a number, 0 or more, got \"-3\"");
  ExpectUsageError("run --top x -- true", "heaprec run: --top expects a number, got \"x\"");
  ExpectUsageError("run --quiet=x -- true", "heaprec run: --quiet takes no value, got \"x\"");
  ExpectUsageError("report",
                   "heaprec report: missing FILES (usage: heaprec report [OPTIONS] FILES...)");
  ExpectUsageError("diff a", "heaprec diff: missing NEW (usage: heaprec diff [OPTIONS] BASE NEW)");
  ExpectUsageError("symbolize -o out.pb.gz a b",
                   "heaprec symbolize: -o writes one profile, but 2 paths were given (without -o, "
                   "each profile is symbolized in place)");
  ExpectUsageError("help report diff",
                   "heaprec help: one command at a time (heaprec help COMMAND)");
}

// `heaprec run` registers a flag for every row of the library's settings table that has one, with
// the row's value name; which flags take a value (so that the next word is not the program) comes
// from that registration, and values are checked by the rows' parsers, the library's own.
TEST_F(CommandLineTest, RunHasTheFlagOfEverySetting) {
  Result help = Heaprec("run --help");
  ASSERT_EQ(help.status, 0) << help.err;
  for (const preload::SettingRow& row : preload::AllSettings()) {
    if (row.run_flag == nullptr) continue;
    std::string shown = std::string(row.run_flag) +
                        (row.value_name != nullptr ? std::string(" ") + row.value_name : "");
    EXPECT_NE(help.out.find(shown), std::string::npos) << shown << "\n" << help.out;
  }
  // Without "--": the value after each value-taking flag is its value, not the program.
  Result run = Heaprec("run -o " + ShellQuote(dir_ + "/p.%p.pb.gz") +
                       " --unwind DWARF --dump-above 0 --max-depth 64 --seed 5 --dump-signal USR2 "
                       "--quiet --top 0 sh -c 'exit 3'");
  EXPECT_EQ(run.status, 3) << run.err;
  EXPECT_EQ(run.err.find("invalid"), std::string::npos) << run.err;
}

// A question the profile cannot answer is found before any word about symbolization
// (cli/read_for_display.h): the profile names a libfoo.so found nowhere, whose "no binary" line
// would otherwise come first.
TEST_F(CommandLineTest, UnknownSampleIndexComesBeforeSymbolization) {
  const std::string file = " " + ShellQuote(profile_);
  const std::string error =
      ": unknown sample index 'cpu'; this profile has: alloc_objects, alloc_space, "
      "inuse_objects, inuse_space";
  ExpectUsageError("report --sample-index cpu" + file, "heaprec report" + error);
  ExpectUsageError("diff --sample-index cpu" + file + file, "heaprec diff" + error);
  if (render::HasFlamePage()) {
    ExpectUsageError("flame --sample-index cpu" + file, "heaprec flame" + error);
  }
}

// Every usage error, whatever its kind: status 2, one line on stderr naming heaprec and, once
// the command is known, the command; nothing on stdout.
TEST_F(CommandLineTest, EveryUsageErrorIsOneLineWithStatus2) {
  const std::string file = " " + ShellQuote(profile_);
  const std::vector<std::string> cases = {"rn",
                                          "--bogus",
                                          "-x",
                                          "help bogus",
                                          "report --top" + file + " --top",
                                          "report --sample-index cpu" + file,
                                          "diff a b c",
                                          "report --format" + file,
                                          "symbolize -o",
                                          "flame --output",
                                          "flame --bogus" + file,
                                          "diff" + file,
                                          "diff --format yaml" + file + file,
                                          "leaks",
                                          "leaks --top -" + file,
                                          "leaks --chart-sites 0" + file,
                                          "leaks --min-t -1" + file,
                                          "leaks --single-series=maybe" + file,
                                          "attach",
                                          "attach 12x",
                                          "detach 1 2",
                                          "run",
                                          "run --dormant -- true",
                                          "run --max-depth 0 -- true",
                                          "run --unwind sideways -- true",
                                          "run --push ftp://h -- true",
                                          "run --push http://h --label x -- true",
                                          "run --push http://h --app 'a b' -- true",
                                          "run --push http://h --push-header nocolon -- true",
                                          "run --push http://h --push-timeout -1 -- true",
                                          "run --label a=1 -- true",
                                          "fetch",
                                          "fetch http://127.0.0.1:1/debug/pprof/heap",
                                          "fetch --timeout 0 -o x http://127.0.0.1:1/",
                                          "agent",
                                          "agent /tmp",
                                          "agent /nonexistent --push http://h",
                                          "agent /tmp --push http://h --label a=1 --label a=2"};
  for (const std::string& args : cases) {
    Result r = Heaprec(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
    EXPECT_EQ(r.err.back(), '\n') << args;
    std::string command = args.substr(0, args.find(' '));
    std::string prefix = std::find(kCommands.begin(), kCommands.end(), command) != kCommands.end()
                             ? "heaprec " + command + ": "
                             : "heaprec";
    EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << args << "\n" << r.err;
  }
}

TEST_F(CommandLineTest, NoCommandPrintsTheShortUsage) {
  Result r = Heaprec("");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "Usage: heaprec COMMAND [OPTIONS] [ARGS...]\n"
            "Commands: run, report, summary, symbolize, fetch, flame, ui, diff, leaks, agent, "
            "recover, attach, detach, dump\n"
            "heaprec --help describes them; heaprec help COMMAND shows a command's options and "
            "examples.\n");
}

TEST_F(CommandLineTest, VersionFlags) {
  for (const char* flag : {"--version", "-V"}) {
    Result r = Heaprec(flag);
    EXPECT_EQ(r.status, 0) << flag;
    EXPECT_EQ(r.out, "heaprec " HEAPREC_VERSION "\n") << flag;
    EXPECT_EQ(r.err, "") << flag;
  }
}

TEST_F(CommandLineTest, HelpCommandIsHelpFlag) {
  Result top = Heaprec("--help");
  ASSERT_EQ(top.status, 0);
  EXPECT_EQ(Heaprec("help").out, top.out);
  EXPECT_EQ(Heaprec("-h").out, top.out);
  for (const std::string& command : kCommands) {
    EXPECT_NE(top.out.find("\n  " + command + " "), std::string::npos) << command;
    Result flag = Heaprec(command + " --help");
    Result help = Heaprec("help " + command);
    EXPECT_EQ(help.status, 0) << command;
    EXPECT_EQ(help.out, flag.out) << command;
    EXPECT_EQ(help.out.rfind("Usage: heaprec " + command + " ", 0), 0u) << help.out;
  }
  ExpectUsageError("help reprot",
                   "heaprec: unknown command \"reprot\"; did you mean \"report\"? (heaprec --help "
                   "lists the commands)");
}

// CLI11's defaults printed type names, validators and flag defaults: UINT:INT in [1 - 10],
// TEXT:{text,json}=text, --no-symbolize{false}, FILE TEXT REQUIRED.
TEST_F(CommandLineTest, HelpHasNoParserArtefacts) {
  const std::regex artefact(
      R"([{}]|\b(UINT|FLOAT|TEXT|BOOLEAN|REQUIRED|NONNEGATIVE|POSITIVE)\b|\bINT[ :=]|\bINT$|)"
      R"(:[A-Z]{2,}|)"
      R"(\[[0-9.]+ - [0-9.]+\]|Env:)");
  std::vector<std::string> pages = {"--help"};
  for (const std::string& command : kCommands) pages.push_back(command + " --help");
  for (const std::string& page : pages) {
    Result r = Heaprec(page);
    ASSERT_EQ(r.status, 0) << page;
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
      EXPECT_FALSE(std::regex_search(line, artefact)) << page << ": " << line;
    }
    // A description, then the sections.
    EXPECT_NE(r.out.find("\n\n"), std::string::npos) << page;
    EXPECT_NE(r.out.find("\nOptions:\n"), std::string::npos) << page;
    EXPECT_NE(r.out.find("\nExamples:\n  heaprec "), std::string::npos) << page;
  }
}

// heaprec --help lists each command with the first line of its description: a whole sentence,
// not one cut where the description's source wraps.
TEST_F(CommandLineTest, EveryCommandIsSummarizedInAWholeSentence) {
  Result r = Heaprec("--help");
  ASSERT_EQ(r.status, 0);
  const std::string commands = r.out.substr(r.out.find("Commands:\n"));
  std::map<std::string, std::string> summaries;  // command -> its summary, wrapped lines joined
  std::istringstream lines(commands.substr(0, commands.find("\n\n")));
  std::string line, command;
  std::getline(lines, line);  // "Commands:"
  while (std::getline(lines, line)) {
    std::size_t text = line.find_first_not_of(' ');
    if (text == 2) {  // "  name   summary..."
      std::size_t end = line.find(' ', text);
      command = line.substr(text, end - text);
      text = line.find_first_not_of(' ', end);
    }
    summaries[command] += (summaries[command].empty() ? "" : " ") + line.substr(text);
  }
  ASSERT_EQ(summaries.size(), kCommands.size()) << r.out;
  for (const auto& [name, summary] : summaries) {
    EXPECT_EQ(summary.back(), '.') << name << ": " << summary;
  }
}

// Each example of a command's help uses only options its help lists (the program's own
// arguments, after --, excepted), and those that take a value get one.
TEST_F(CommandLineTest, ExamplesUseRealOptions) {
  for (const std::string& command : kCommands) {
    std::string help = Heaprec("help " + command).out;
    std::string examples = help.substr(help.find("\nExamples:\n"));
    std::istringstream lines(examples);
    std::string line;
    int checked = 0;
    while (std::getline(lines, line)) {
      if (line.rfind("  heaprec " + command + " ", 0) != 0) continue;
      ++checked;
      // The example's comment, after two spaces or more, may name other commands' options.
      std::istringstream words(line.substr(0, line.find("  ", 2)));
      std::string word;
      while (words >> word && word != "--" && word != "&&" && word != ">") {
        if (word.size() < 2 || word[0] != '-') continue;
        std::string name = word.substr(0, word.find('='));
        std::regex listed("\n  (-[a-z], )?" + name + "[ ,\n]");
        EXPECT_TRUE(std::regex_search(help, listed)) << command << ": " << line;
      }
    }
    EXPECT_GE(checked, 2) << command << " has fewer than two examples of itself";
  }
}

// `heaprec run` hands the program its arguments as given, options that look like heaprec's too.
TEST_F(CommandLineTest, RunPassesProgramArgumentsThrough) {
  const std::string program = " sh -c 'echo \"$@\"' sh --bogus -x --top";
  for (const std::string& args :
       {"run --top 0 -o " + ShellQuote(dir_ + "/p.%p.pb.gz") + " --" + program,
        "run --top 0 -o " + ShellQuote(dir_ + "/q.%p.pb.gz") + program}) {
    Result r = Heaprec(args);
    EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "--bogus -x --top\n") << args;
  }
}

// Every command parses its options the same wherever they stand: before its positionals, after
// them or between them; a repeatable option (one value per occurrence, cli/option_helpers.h) right
// before a positional takes its one value and leaves the positional to the command. Each group's
// command lines must all end with the group's status (not a usage error, unless that is the point)
// and print exactly the same. The values reach the output: the --binary-path directories are where
// the profile's unresolved libfoo.so was looked for.
TEST_F(CommandLineTest, OptionsParseTheSameBeforeAndAfterPositionals) {
  const std::string file = ShellQuote(profile_);
  const std::string next = ShellQuote(dir_ + "/new.pb.gz");
  render::WriteProfileFile(test_support::MakeReportProfile(), dir_ + "/new.pb.gz");
  const std::string empty = ShellQuote(dir_ + "/empty");
  std::filesystem::create_directory(dir_ + "/empty");
  const std::string out = ShellQuote(dir_ + "/symbolized.pb.gz");
  const std::string page = ShellQuote(dir_ + "/page.html");
  const std::string frames = "--skip-frames '^Build$' --keep-frames '^Inner$' ";
  const std::string search =
      "--binary-path /opt/b1 --binary-path /opt/b2:/opt/b3 --debug-path /opt/d --no-cache ";
  // Nothing listens on port 1: fetch fails the same way whatever the order of its options.
  const std::string url = "http://127.0.0.1:1/debug/pprof/heap";
  const std::string fetched = ShellQuote(dir_ + "/fetched.pb.gz");
  const std::string header = "--push-header 'X-Scope-OrgID: a' ";
  const std::string push =
      "--push http://127.0.0.1:1 --app checkout --label env=prod --label host=h1 ";
  // The program `heaprec run` runs, which prints its arguments.
  const std::string program = "sh -c 'echo \"$@\"' sh a --b";
  // A fixed seed: which of the program's allocations are sampled (and so whether a peak profile
  // and a line about dash's debug info appear) is then the same in every case.
  const std::string run =
      "run --top 0 --seed 1 -o " + ShellQuote(dir_ + "/run.pb.gz") + " --max-depth 64 --no-cache ";
  struct Group {
    int status;
    std::vector<std::string> lines;
  };
  const std::vector<Group> groups = {
      {0,
       {"report " + file + " --top 3 --sample-index alloc_space " + frames + search,
        "report --top 3 --sample-index alloc_space " + frames + search + file,
        "report " + search + frames + file + " --top 3 --sample-index alloc_space"}},
      {0,
       {"report " + file + " --format folded " + search,
        "report " + search + file + " --format folded"}},
      {1,  // libfoo.so is found nowhere
       {"symbolize " + file + " -o " + out + " " + search + "--debuginfod http://127.0.0.1:1",
        "symbolize -o " + out + " " + search + "--debuginfod http://127.0.0.1:1 " + file,
        "symbolize --debuginfod http://127.0.0.1:1 " + search + file + " -o " + out}},
      {1,  // nothing answers at the URL
       {"fetch " + url + " -o " + fetched + " --timeout 5 " + search,
        "fetch -o " + fetched + " --timeout 5 " + search + url,
        "fetch " + search + url + " --timeout 5 -o " + fetched}},
      {render::HasFlamePage() ? 0 : 1,
       {"flame " + file + " -o - --sample-index alloc_space " + frames + search,
        "flame -o - --sample-index alloc_space " + frames + search + file,
        "flame " + frames + search + file + " -o - --sample-index alloc_space"}},
      {0,
       {"summary " + file + " --top 3 --processes 1 " + search,
        "summary --top 3 " + search + file + " --processes 1",
        "summary " + search + "--processes 1 " + file + " --top 3"}},
      {render::HasUiPage() ? 0 : 1,
       {"ui " + file + " -o " + page + " " + search, "ui -o " + page + " " + search + file,
        "ui " + search + file + " -o " + page}},
      {0,
       {"diff " + file + " " + next + " --top 3 --format json " + frames + search,
        "diff --top 3 --format json " + frames + search + file + " " + next,
        "diff " + file + " " + frames + search + next + " --top 3 --format json"}},
      {0,
       {"leaks " + file + " " + next + " --top 3 --by stack " + frames + search,
        "leaks --top 3 --by stack " + frames + search + file + " " + next,
        "leaks " + file + " " + frames + search + next + " --top 3 --by stack"}},
      {0,
       {"agent " + empty + " " + push + header + "--once --no-symbolize --no-cache",
        "agent " + push + header + empty + " --once --no-symbolize --no-cache",
        "agent --once --no-cache --no-symbolize " + header + push + empty}},
      {1,  // a profile is not a heap record: the same one line whatever the order
       {"recover --keep -o " + out + " " + file, "recover " + file + " --keep -o " + out,
        "recover -o " + out + " " + file + " --keep"}},
      {1,  // a pid nobody has: the same refusal whatever the order
       {"attach --sample-interval 64K -o " + out + " 4194000",
        "attach 4194000 --sample-interval 64K -o " + out,
        "attach -o " + out + " 4194000 --sample-interval 64K"}},
      {1, {"dump -o " + out + " 4194000", "dump 4194000 -o " + out}},
      // run's positionals are the program's command line: its options come first, and a value
      // is never taken for the program, whether "--" ends the options or not.
      {0, {run + "-- " + program, run + program}},
      {2,  // --label and --push-header without --push: a usage error, not a missing program
       {run + "--label env=prod --push-header 'X-Scope-OrgID: a' -- " + program,
        run + "--label env=prod --push-header 'X-Scope-OrgID: a' " + program}},
  };
  // `heaprec run` lists the profiles with the pid of each run's own process; curl's message for a
  // refused connection says how long it took ("after 4 ms"), which a loaded machine changes.
  const std::regex pid("pid [0-9]+|after [0-9]+ ms");
  // Each `heaprec run` starts without the last one's profiles: a profile written in the same clock
  // tick as the next process starts (/proc's start time has a 10 ms grain) looks newer than that
  // process, is kept rather than replaced, and the new one is named run-2.pb.gz.
  auto forget_runs = [this] {
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      if (entry.path().filename().string().rfind("run", 0) == 0) std::filesystem::remove(entry);
    }
  };
  std::set<std::string> covered;
  for (const Group& group : groups) {
    covered.insert(group.lines[0].substr(0, group.lines[0].find(' ')));
    forget_runs();
    Result first = Heaprec(group.lines[0]);
    EXPECT_EQ(first.status, group.status) << group.lines[0] << "\n" << first.err;
    for (size_t i = 1; i < group.lines.size(); ++i) {
      forget_runs();
      Result r = Heaprec(group.lines[i]);
      EXPECT_EQ(r.status, first.status) << group.lines[i] << "\n" << r.err;
      EXPECT_EQ(r.out, first.out) << group.lines[i];
      EXPECT_EQ(std::regex_replace(r.err, pid, "N"), std::regex_replace(first.err, pid, "N"))
          << group.lines[i];
    }
  }
  Result report = Heaprec(groups.front().lines[0]);
  EXPECT_NE(report.err.find("binary path /opt/b1, binary path /opt/b2, binary path /opt/b3"),
            std::string::npos)
      << report.err;
  // Every command with options besides --help is covered (attach and detach take only a PID).
  for (const std::string& command : kCommands) {
    std::string help = Heaprec("help " + command).out;
    size_t start = help.find("\nOptions:\n");
    std::string options = help.substr(start, help.find("\n\n", start) - start);
    bool only_help = options.find("\n  -", options.find("--help")) == std::string::npos;
    EXPECT_TRUE(only_help || covered.count(command)) << command << " has options but no case";
  }
}

class ForeignFileTest : public CommandLineTest {
 protected:
  // `heaprec report FILE` fails with status 1 and this one line.
  void ExpectRejected(const std::string& file, const std::string& what) {
    Result r = Heaprec("report " + ShellQuote(file));
    EXPECT_EQ(r.status, 1) << file;
    EXPECT_EQ(r.err, "heaprec report: " + file + " " + what + "\n");
    EXPECT_EQ(r.out, "");
  }

  // The file in dir_ whose name starts with `prefix`.
  std::string Find(const std::string& prefix) {
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      if (entry.path().filename().string().rfind(prefix, 0) == 0) return entry.path().string();
    }
    ADD_FAILURE() << "no " << prefix << "* in " << dir_;
    return dir_ + "/" + prefix;
  }
};

TEST_F(ForeignFileTest, HeaptrackRecording) {
  std::string out;
  ASSERT_EQ(
      test_support::RunCommand(
          ShellQuote(HEAPREC_HEAPTRACK) + " -o " + ShellQuote(dir_ + "/ht") + " /bin/true", &out),
      0)
      << out;
  std::string recording = Find("ht.");  // ht.zst (or ht.gz from a heaptrack without zstd)
  const std::string what =
      "is a heaptrack recording; open it with heaptrack_print or heaptrack_gui, or profile the "
      "program with heaprec run";
  ExpectRejected(recording, what);
  // The same line from every command that reads profiles.
  Result r = Heaprec("symbolize " + ShellQuote(recording));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "heaprec symbolize: " + recording + " " + what + "\n");
  r = Heaprec("diff " + ShellQuote(profile_) + " " + ShellQuote(recording));
  EXPECT_EQ(r.err, "heaprec diff: " + recording + " " + what + "\n");
}

TEST_F(ForeignFileTest, JemallocAndGperftoolsHeapProfiles) {
  // jemalloc, as Debian builds it, profiles when asked through MALLOC_CONF.
  std::string out;
  ASSERT_EQ(test_support::RunCommand(
                "MALLOC_CONF=prof:true,prof_final:true,prof_prefix:" + ShellQuote(dir_ + "/je") +
                    " LD_PRELOAD=" + ShellQuote(HEAPREC_JEMALLOC) + " /bin/true",
                &out),
            0)
      << out;
  ExpectRejected(Find("je."),
                 "is a jemalloc heap profile; read it with jeprof, or profile the program with "
                 "heaprec run");
  // gperftools' heap profiler (not packaged with tcmalloc-minimal): its text format's header.
  std::string gperftools = dir_ + "/prog.0001.heap";
  std::ofstream(gperftools) << "heap profile:    2:   262400 [     2:   262400] @ heapprofile\n"
                               "     1:   262144 [     1:   262144] @ 0x4005d4 0x400614\n";
  ExpectRejected(gperftools,
                 "is a heap profile in gperftools' text format (tcmalloc's, or an old Go one); "
                 "read it with pprof, or profile the program with heaprec run");
}

TEST_F(ForeignFileTest, GoCpuProfile) {
  // What Go's runtime/pprof writes for a CPU profile, through heaprec's own writer.
  std::string file = dir_ + "/cpu.pprof";
  render::WriteProfileFile(test_support::MakeGoCpuProfile(), file);
  ExpectRejected(file,
                 "is a CPU profile (sample types samples/count, cpu/nanoseconds), not a heap "
                 "profile; read it with pprof, or profile the program's heap with heaprec run");
}

TEST_F(ForeignFileTest, ObviouslyNotAProfile) {
  std::string text = dir_ + "/notes.txt";
  std::ofstream(text) << "TODO: profile the server\nsecond line\n";
  ExpectRejected(text,
                 "is a text file, not a profile (it starts with \"TODO: profile the server\"); "
                 "heaprec reads pprof heap profiles, such as heaprec run writes");
  std::string empty = dir_ + "/empty.pb.gz";
  std::ofstream{empty};
  Result r = Heaprec("report " + ShellQuote(empty));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "heaprec report: " + empty +
                       ": empty file, not a profile; heaprec reads pprof heap profiles, such as "
                       "heaprec run writes\n");
  std::string whole = ReadFile(profile_);
  std::string truncated = dir_ + "/truncated.pb.gz";
  std::ofstream(truncated, std::ios::binary) << whole.substr(0, whole.size() / 2);
  r = Heaprec("report " + ShellQuote(truncated));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "heaprec report: " + truncated +
                       ": truncated gzip data: the file is incomplete (cut short while it was "
                       "written or copied)\n");
  ExpectRejected("/bin/true",
                 "is an ELF binary (a program or a library), not a profile; to profile a "
                 "program, run it with heaprec run -- PROGRAM");
}

}  // namespace
}  // namespace heaprec
