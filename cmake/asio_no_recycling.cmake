# AGENTTY_ASIO_NO_RECYCLING: Asio frees handler, coroutine-frame and
# cancellation memory at once instead of keeping it for reuse, so ASan sees a
# use after free there. BOOST_ASIO_DISABLE_SMALL_BLOCK_RECYCLING alone does
# not do it in Boost 1.81: only operation memory honours it; awaitable frames,
# cancellation handlers, posted functions and strands go through
# thread_info_base::allocate, which recycles whatever the macro says. So this
# writes a copy of that header which bypasses the per-thread cache, into the
# build directory, ahead of Boost's on the include path.
set(asio_header boost/asio/detail/thread_info_base.hpp)
find_file(asio_thread_info_base ${asio_header} PATHS ${Boost_INCLUDE_DIRS} NO_DEFAULT_PATH)
if(NOT asio_thread_info_base)
  message(FATAL_ERROR "AGENTTY_ASIO_NO_RECYCLING: ${asio_header} not found in ${Boost_INCLUDE_DIRS}")
endif()
file(READ ${asio_thread_info_base} header)
# allocate() and deallocate() take the cache from `this_thread`; with none
# they use aligned_new and aligned_delete.
set(bypass "\n#if defined(BOOST_ASIO_DISABLE_SMALL_BLOCK_RECYCLING)\n    this_thread = 0;\n#endif")
set(allocate_head "std::size_t size, std::size_t align = BOOST_ASIO_DEFAULT_ALIGN)\n  {")
set(deallocate_head "void* pointer, std::size_t size)\n  {")
foreach(head IN ITEMS allocate_head deallocate_head)
  string(FIND "${header}" "${${head}}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "AGENTTY_ASIO_NO_RECYCLING: ${asio_thread_info_base} is not the header "
                        "this was written for (${head} not found); update cmake/asio_no_recycling.cmake")
  endif()
  string(REPLACE "${${head}}" "${${head}}${bypass}" header "${header}")
endforeach()
set(overlay ${PROJECT_BINARY_DIR}/asio-no-recycling)
file(WRITE ${overlay}/${asio_header} "${header}")
include_directories(BEFORE SYSTEM ${overlay})
add_compile_definitions(BOOST_ASIO_DISABLE_SMALL_BLOCK_RECYCLING)
