// The version and the git commit of the source tree the binary was built from ("-dirty" when tracked files
// had uncommitted changes), baked into every results file. Defined in a generated translation unit
// (core/version.cpp.in), so that only it depends on the commit.
#pragma once

namespace clm {
extern const char* const kVersion;
extern const char* const kGitCommit;
}  // namespace clm
