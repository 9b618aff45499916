# install.cmake — what `cmake --install` puts under the prefix: the header, the static and the
# shared library (libdualbatch.a, libdualbatch.so.<major>), the `dualbatch` CLI, a CMake package
# (find_package(dualbatch CONFIG): dualbatch::dualbatch, the shared library, and
# dualbatch::dualbatch_static, which carries OpenMP, the static CUDA runtime, libdl and threads)
# with its version file, and a pkg-config file (dualbatch.pc; `--static` adds the static link's
# libraries).  With Fortran: libdualbatch_fortran.a (dualbatch::dualbatch_fortran, on the shared
# library), the compiled module dualbatch.mod and its source dualbatch.f90 beside the header.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(dualbatch PROPERTIES EXPORT_NAME dualbatch_static)
set_target_properties(dualbatch_shared PROPERTIES EXPORT_NAME dualbatch)
install(TARGETS dualbatch dualbatch_shared EXPORT dualbatchTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/dualbatch.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET dualbatch_fortran)
  install(TARGETS dualbatch_fortran EXPORT dualbatchTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(FILES $<TARGET_PROPERTY:dualbatch_fortran,Fortran_MODULE_DIRECTORY>/dualbatch.mod
                ${PROJECT_SOURCE_DIR}/src/fortran/dualbatch.f90 DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
if(TARGET dualbatch_cli)
  install(TARGETS dualbatch_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(DUAL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/dualbatch)
install(EXPORT dualbatchTargets NAMESPACE dualbatch:: DESTINATION ${DUAL_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/dualbatchConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/dualbatchConfig.cmake INSTALL_DESTINATION ${DUAL_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dualbatchConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dualbatchConfig.cmake ${PROJECT_BINARY_DIR}/dualbatchConfigVersion.cmake
        DESTINATION ${DUAL_CMAKE_DIR})

# pkg-config: the static link's libraries, in the order a linker needs them
set(DUAL_PC_PRIVATE "${OpenMP_C_FLAGS} -ldl -lpthread -lm")
if(DUAL_HAVE_CUDA)
  get_target_property(DUAL_CUDART_STATIC CUDA::cudart_static IMPORTED_LOCATION)
  get_filename_component(DUAL_CUDA_LIBDIR "${DUAL_CUDART_STATIC}" DIRECTORY)
  set(DUAL_PC_PRIVATE "-L${DUAL_CUDA_LIBDIR} -lcudart_static -lrt -lstdc++ ${DUAL_PC_PRIVATE}")
endif()
# relocatable: the prefix is found from the .pc file's own place (cmake --install --prefix P)
file(RELATIVE_PATH DUAL_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file(${PROJECT_SOURCE_DIR}/cmake/dualbatch.pc.in ${PROJECT_BINARY_DIR}/dualbatch.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/dualbatch.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
