# The dependency rules between the project's folders, checked on every build:
# a source file may include a header of its own folder and of the folders its
# rule lists, and no other of the project's headers. Each folder is one CMake
# target linked to the targets of exactly these folders (docs/architecture.md).
#
#   cmake -DROOT=<source dir> [-DSTAMP=<file>] -P cmake/layering.cmake
#
# exits non-zero, naming the file, the line and the rule, on the first
# forbidden include. The folder list is the one place the layering is written.
set(SAMPLESCOPE_LAYERS
  "engine/base="
  "engine/core=engine/base"
  "engine/io=engine/base engine/core"
  "engine/stages=engine/base engine/core"
  "engine/pipelines=engine/base engine/core engine/stages"
  "engine/stats=engine/base engine/core engine/stages engine/pipelines"
  "engine/models=engine/base engine/core engine/io"
  "engine/generation=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats engine/models"
  "engine/responses=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats"
  "engine/json=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats engine/models engine/generation engine/responses"
  "kernels=engine/base engine/core"
  "kernels/tools=engine/base engine/core engine/stages engine/pipelines engine/stats engine/json kernels"
  "kernels/check=engine/base engine/core engine/stages engine/pipelines engine/stats engine/json kernels kernels/tools"
  "ui/common=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats engine/json"
  "ui/stages=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats engine/json ui/common"
  "ui/session=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats engine/json ui/common"
  "ui/panels=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats engine/json ui/common ui/session"
  "ui/pipelines=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats engine/json ui/common"
  "ui/compare=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats engine/json kernels kernels/tools ui/common"
  "python=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats engine/json kernels app app/cli"
  "ui/verify=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats engine/json ui/common"
  "ui/responses=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats engine/responses engine/json ui/common"
  "ui/generate=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats engine/models engine/generation engine/json ui/common ui/stages ui/session"
  "ui/multistep=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats engine/models engine/generation engine/json ui/common ui/session ui/generate"
  "ui/window=engine/base engine/core engine/io engine/stages engine/pipelines engine/stats engine/models engine/generation engine/responses engine/json kernels kernels/tools ui/common ui/stages ui/session ui/panels ui/pipelines ui/compare ui/verify ui/responses ui/generate ui/multistep"
)

cmake_minimum_required(VERSION 3.25)

if(NOT ROOT)
  message(FATAL_ERROR "layering.cmake: pass -DROOT=<source dir>")
endif()

set(violations "")
foreach(layer IN LISTS SAMPLESCOPE_LAYERS)
  string(REPLACE "=" ";" parts "${layer}")
  list(GET parts 0 folder)
  list(LENGTH parts n)
  set(allowed "${folder}")
  if(n GREATER 1)
    list(GET parts 1 deps)
    separate_arguments(deps)
    list(APPEND allowed ${deps})
  endif()
  file(GLOB sources LIST_DIRECTORIES false "${ROOT}/${folder}/*.h" "${ROOT}/${folder}/*.cpp" "${ROOT}/${folder}/*.cu")
  foreach(source IN LISTS sources)
    file(STRINGS "${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"(engine|kernels|ui|app)/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" header "${line}")
      get_filename_component(header_dir "${header}" DIRECTORY)
      list(FIND allowed "${header_dir}" found)
      if(found EQUAL -1)
        file(RELATIVE_PATH rel "${ROOT}" "${source}")
        string(APPEND violations "  ${rel} includes ${header}: ${folder}/ may include only ${allowed}\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "Forbidden includes (cmake/layering.cmake):\n${violations}")
endif()
if(STAMP)
  file(TOUCH "${STAMP}")
endif()
