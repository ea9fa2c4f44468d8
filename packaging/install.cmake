# install.cmake - what `cmake --install` puts where (GNUInstallDirs), but
# the targets themselves: each folder installs its own programs with
# ldmpq_install_program() below, pq/CMakeLists.txt the library.  This file
# owns the places, the pkg-config file, the header list, the site
# configuration, the examples and the service unit's hook.
#
# Where things go, under CMAKE_INSTALL_PREFIX (/usr for the package,
# /usr/local by default):
#   bin/                  the programs users and scripts run
#   sbin/                 ldmd, the daemon (Debian keeps daemons there, and
#                         its man page is in section 8)
#   <libdir>/libldmpq.a   the queue library, <libdir>/pkgconfig/ldmpq.pc
#   include/pq/           pq.h and the header it includes (product.h)
#   share/man/man1, man8  the man pages
#   share/doc/ldmpq/examples   etc/'s files, as shipped
#   <sysconfdir>/ldm      the site's configuration, from etc/ (/etc/ldm for
#                         the prefix /usr): registry.xml, ldmd.conf,
#                         pqact.conf and any other etc/*.conf
#   lib/systemd/system    etc/ldmd.service, when the tree has one
# The programs look for the registry at $LDMHOME/etc/registry.xml with
# LDMHOME /var/lib/ldm (ldmd/site/registry.h); the package makes
# /var/lib/ldm/etc a link to /etc/ldm (packaging/debian/postinst), and a
# source install needs the same link, LDMHOME or LDM_REGISTRY (README).

set(LDMPQ_CONFDIR "${CMAKE_INSTALL_FULL_SYSCONFDIR}/ldm" CACHE PATH
    "Where the site's configuration (registry.xml, ldmd.conf...) is installed")
set(LDMPQ_UNITDIR "${CMAKE_INSTALL_PREFIX}/lib/systemd/system" CACHE PATH
    "Where etc/ldmd.service is installed")

# ldmpq_install_program(TARGET [SBIN]): installs the program TARGET into bin
# (sbin with SBIN) and its man page, TARGET.1 (TARGET.8 with SBIN), from
# the calling folder; a program without its man page is a configure error.
function(ldmpq_install_program target)
  cmake_parse_arguments(P "SBIN" "" "" ${ARGN})
  if(P_SBIN)
    set(dir ${CMAKE_INSTALL_SBINDIR})
    set(section 8)
  else()
    set(dir ${CMAKE_INSTALL_BINDIR})
    set(section 1)
  endif()
  set(page ${CMAKE_CURRENT_SOURCE_DIR}/${target}.${section})
  if(NOT EXISTS ${page})
    message(FATAL_ERROR "ldmpq_install_program(${target}): no man page ${page}")
  endif()
  install(TARGETS ${target} RUNTIME DESTINATION ${dir})
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endfunction()

# The library's header, with what it includes, and its pkg-config file.
install(FILES ${CMAKE_SOURCE_DIR}/pq/pq.h ${CMAKE_SOURCE_DIR}/pq/product.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pq)
configure_file(${CMAKE_CURRENT_LIST_DIR}/ldmpq.pc.in
               ${CMAKE_BINARY_DIR}/ldmpq.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/ldmpq.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# etc/: the examples as shipped, and the site's configuration.
file(GLOB LDMPQ_SITE_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/etc/*.conf
     ${CMAKE_SOURCE_DIR}/etc/*.xml)
install(FILES ${LDMPQ_SITE_FILES}
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES ${LDMPQ_SITE_FILES} DESTINATION ${LDMPQ_CONFDIR})

# The service unit (etc/ldmd.service, ldmd.service(8)); the package's
# maintainer scripts enable and start it when systemd runs.
install(FILES ${CMAKE_SOURCE_DIR}/etc/ldmd.service
        DESTINATION ${LDMPQ_UNITDIR})
