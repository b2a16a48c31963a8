# Fails when a source file includes a header of a layer it must not see (docs/design.md section 2):
#   python -> app -> studies -> runs -> analysis, io -> problems / formulations / integrators / mechanism_files -> core
# Each layer sees itself and the layers listed for it below; subfolders belong to their top folder's layer
# (runs/zoo is runs). experiments/ holds configs only: nothing may include from it.
# Run by the clm_layering target on every build: cmake -DSOURCE_DIR=... -P cmake/check_layering.cmake
set(layers core problems formulations integrators mechanism_files io analysis runs studies app python)
set(allowed_core core)
set(allowed_problems core problems)
set(allowed_formulations core formulations)
set(allowed_integrators core integrators)
set(allowed_mechanism_files core mechanism_files)
set(allowed_io core io)
set(allowed_analysis core problems formulations integrators analysis)
set(allowed_runs core problems formulations integrators mechanism_files io analysis runs)
set(allowed_studies core problems formulations integrators mechanism_files io analysis runs studies)
set(allowed_app core problems formulations integrators mechanism_files io analysis runs studies app)
# python/: the extension module of the Python package, the front end above app (sweep, kozlov and analyze run
# the command's own code in process).
set(allowed_python core problems formulations integrators mechanism_files io analysis runs studies app python)
set(violations "")
foreach(layer ${layers})
  file(GLOB_RECURSE files ${SOURCE_DIR}/${layer}/*.hpp ${SOURCE_DIR}/${layer}/*.cpp ${SOURCE_DIR}/${layer}/*.cpp.in
       ${SOURCE_DIR}/${layer}/*.def)
  foreach(f ${files})
    file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[a-z_]+/")
    foreach(line ${lines})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([a-z_]+)/.*" "\\1" dir "${line}")
      list(FIND layers ${dir} known)
      if(NOT known EQUAL -1 OR dir STREQUAL "experiments")
        list(FIND allowed_${layer} ${dir} ok)
        if(ok EQUAL -1)
          file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
          string(APPEND violations "  ${rel}: ${line}  (${layer} must not see ${dir})\n")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()
# experiments/ is configs and their README only (issue 20): a source file there is a layout error.
file(GLOB stray ${SOURCE_DIR}/experiments/*.cpp ${SOURCE_DIR}/experiments/*.hpp ${SOURCE_DIR}/experiments/*.h)
foreach(f ${stray})
  file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
  string(APPEND violations "  ${rel}: source file in experiments/ (configs only; code belongs in app, runs, studies, io or analysis)\n")
endforeach()
if(violations)
  message(FATAL_ERROR "include layering violated (app -> studies -> runs -> analysis, io -> problems / formulations / integrators / mechanism_files -> core):\n${violations}")
endif()
