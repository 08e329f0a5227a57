# The side-by-side pipeline view and the empirical-sampling view: standalone
# widgets over engine/pipeline*.h and engine/empirical_sampling.h, for the
# main window to embed. Included from ui/CMakeLists.txt.
add_library(samplescope_ui_pipelines STATIC
  ${CMAKE_CURRENT_LIST_DIR}/pipeline_editor.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stage_strip.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pipeline_compare_view.cpp
  ${CMAKE_CURRENT_LIST_DIR}/empirical_histogram_view.cpp
)
set_target_properties(samplescope_ui_pipelines PROPERTIES AUTOMOC ON)
target_include_directories(samplescope_ui_pipelines PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(samplescope_ui_pipelines
  PUBLIC samplescope_engine samplescope_cpu_state Qt6::Widgets Qt6::Concurrent QCustomPlotQt6::QCustomPlotQt6
  PRIVATE samplescope_warnings)
