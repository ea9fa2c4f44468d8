# The Debian package (packaging/deb.cmake): pkg_deb builds it from this
# source tree in a scratch build of its own (prefix /usr, no tests), checks
# its contents and control files, and installs, re-configures, removes and
# purges it in a scratch root with dpkg --root, and runs the installed
# site there (the unit's lines, ldmadmin, a restart: test/pkg/site.sh).  Its
# second argument is this build's test folder, whose programs must not be
# in the package; its third, test/service's notify_listen (so
# test/CMakeLists.txt includes service/ first), is the unit's notification
# socket in site.sh.  Label nosan: the package is a release build of its
# own, whichever build runs the test, so the sanitizer build skips it.
if(NOT TARGET notify_listen)
  message(FATAL_ERROR "test/pkg needs test/service's notify_listen")
endif()
pq_script_test(pkg_deb ${CMAKE_CURRENT_LIST_DIR}/deb.sh TIMEOUT 900
  LABELS pkg nosan ENVIRONMENT ${PQ_TESTDATA_ENV}
  ARGS ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}/test $<TARGET_FILE:notify_listen>)

# pkg_manpages: every manual page of the tree renders without a warning
# (groff -ww, man -l), as the package installs it.
pq_script_test(pkg_manpages ${CMAKE_CURRENT_LIST_DIR}/manpages.sh TIMEOUT 120
  LABELS pkg ARGS ${CMAKE_SOURCE_DIR})
