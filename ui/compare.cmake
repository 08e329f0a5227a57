# The Compare view: a batch through the CPU reference and the batch engine, row
# by row (kernels/batch_compare.h), as a standalone widget for the main window
# to embed. Included from ui/CMakeLists.txt.
add_library(samplescope_ui_compare STATIC
  ${CMAKE_CURRENT_LIST_DIR}/compare_batch.cpp
  ${CMAKE_CURRENT_LIST_DIR}/batch_params_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compare_rows_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compare_view.cpp
)
set_target_properties(samplescope_ui_compare PROPERTIES AUTOMOC ON)
target_include_directories(samplescope_ui_compare PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(samplescope_ui_compare
  PUBLIC samplescope_kernels Qt6::Widgets Qt6::Concurrent QCustomPlotQt6::QCustomPlotQt6
  PRIVATE samplescope_warnings)
