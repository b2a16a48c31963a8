# Writes generated/core/version.cpp with the version and the git commit of the source tree, marked "-dirty"
# when tracked files have uncommitted changes. Run on every build (the clm_version target), it rewrites the
# file only when the text changes, so the binary always carries the true commit and an unchanged commit
# costs no recompilation. (Taken once at configure time, the commit went stale after new commits.)
# Inputs: -DSRC=<source dir> -DOUT=<header> -DVERSION=<project version> -DTEMPLATE=<version.cpp.in>
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE CLMBENCH_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE CLMBENCH_GIT_DIRTY OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT CLMBENCH_GIT_COMMIT)
  set(CLMBENCH_GIT_COMMIT "unknown")
elseif(CLMBENCH_GIT_DIRTY)
  set(CLMBENCH_GIT_COMMIT "${CLMBENCH_GIT_COMMIT}-dirty")
endif()
set(PROJECT_VERSION ${VERSION})
configure_file(${TEMPLATE} ${OUT} @ONLY)
