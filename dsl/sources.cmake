# The sources of the kronex_dsl library (language, file readers, evaluation: no backend), relative
# to dsl/, for the two builds that compile them: dsl/CMakeLists.txt and the fuzz project
# (dsl/fuzz/CMakeLists.txt, built with clang and the sanitizers).
#   kronex_dsl_front_sources  the language and the file readers, which the fuzz targets read
#   kronex_dsl_sources        those and the evaluator
file(GLOB kronex_dsl_front_sources RELATIVE ${CMAKE_CURRENT_LIST_DIR} CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/core/*.cpp ${CMAKE_CURRENT_LIST_DIR}/io/*.cpp ${CMAKE_CURRENT_LIST_DIR}/language/*.cpp)
file(GLOB kronex_dsl_eval_sources RELATIVE ${CMAKE_CURRENT_LIST_DIR} CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/eval/*.cpp)
set(kronex_dsl_sources ${kronex_dsl_front_sources} ${kronex_dsl_eval_sources})
