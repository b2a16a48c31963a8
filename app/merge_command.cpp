// `clmbench merge OUT.h5 IN.h5 ...`: joins results files (shard outputs of a sweep, any clmbench results
// files), or the part files of one sweep, into one (io/results_merge.hpp).
#include <iostream>
#include <sstream>

#include "core/types.hpp"
#include "app/command.hpp"
#include "io/results_merge.hpp"

namespace clm {

namespace {

const char* kMergeHelp = R"(usage:
  clmbench merge OUT.h5 IN.h5 [IN.h5 ...]

Joins results files into OUT.h5: the shard outputs of a sweep run with --shard i/n, or any results files
of this program; or the part files of one sweep (OUT.parts/*.part, which are no HDF5 files: merged alone,
as the sweep's --resume would).
  - runs are copied whole (datasets, attributes, extras): in grid order (their sweep_index) when every
    run comes from a sweep, else in argument order;
  - /summary is the concatenation of the inputs' rows in that order, with whatever columns they have
    (the inputs must have the same columns);
  - a run id found twice is kept once when both copies are identical (timings aside), else refused;
  - groups beside /runs and /summary (a Kozlov study's /kozlov/<study>, /analysis) are copied from the
    first input holding each; the same group with other contents in two inputs is refused;
  - root attributes: clmbench_version and git_commit of this binary, created_utc, command_line, and
    config: the sweep's configuration when all inputs come from one sweep (also as sweep_config), else
    the inputs' common config, else each input's config after a "# from FILE" line. Inputs of different
    sweeps are refused.
Merging the shards of a sweep gives the same datasets as running it in one piece.
OUT.h5 is written like every results file: to a temporary name, renamed when complete, while holding
OUT.h5.lock (one writer per output). Exit codes: 1 for a missing input or inputs that cannot be joined,
2 for an input that is not a readable results file or an output that cannot be written.

)";

std::string merge_help() { return std::string(kMergeHelp) + exit_codes_help(); }

int merge(const CommandInvocation& call) {
  po::options_description flags("merge options");
  flags.add_options()("help,h", "this help");
  const po::variables_map vm = parse_command_line(call.args, flags, "merge", "files");
  if (vm.count("help")) {
    call.out << merge_help();
    return kExitOk;
  }
  const std::vector<std::string> files = strings_of(vm, "files");
  if (files.size() < 2) throw InputError("merge needs an output file and at least one input (clmbench merge OUT.h5 IN.h5 ...)");
  const std::vector<std::string> inputs(files.begin() + 1, files.end());
  const MergeReport report = merge_results(inputs, files.front(), call.command_line);
  call.out << "wrote " << files.front() << " (" << report.runs << " run" << (report.runs == 1 ? "" : "s") << " from "
           << inputs.size() << " file" << (inputs.size() == 1 ? "" : "s");
  if (report.duplicates) call.out << "; " << report.duplicates << " identical duplicate" << (report.duplicates == 1 ? "" : "s") << " skipped";
  for (size_t i = 0; i < report.groups.size(); ++i) call.out << (i == 0 ? "; " : ", ") << report.groups[i];
  call.out << ")\n";
  return kExitOk;
}

}  // namespace

Command merge_command() {
  return {"merge", "join results files (sweep shards, part files) into one, runs in grid order", merge_help, merge};
}

}  // namespace clm
