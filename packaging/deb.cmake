# deb.cmake - the Debian package, with CPack's DEB generator (no debhelper,
# no network): `cpack -G DEB` in a build configured with
# -DCMAKE_INSTALL_PREFIX=/usr -DPQ_TESTS=OFF makes ldmpq_<version>_<arch>.deb
# from the install rules (packaging/install.cmake), with the maintainer
# scripts of packaging/debian/ and the site's configuration as conffiles.
# Run-time dependencies come from dpkg-shlibdeps (dpkg-dev, part of
# build-essential); passwd for useradd.  One package: the library, its
# header and ldmpq.pc are in it too, so it depends on what ldmpq.pc's
# Requires names (libcrypto.pc of libssl-dev, libisal.pc of libisal-dev):
# the static library needs them to link, and `pkg-config ldmpq` fails
# without their .pc files.  test/pkg/deb.sh builds it and checks it.
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(STATUS "ldmpq: the Debian package wants -DCMAKE_INSTALL_PREFIX=/usr "
    "(this build installs under ${CMAKE_INSTALL_PREFIX})")
endif()

# The maintainer scripts and conffiles, with this build's paths.
set(LDMPQ_DEB_CONTROL ${CMAKE_BINARY_DIR}/packaging/debian)
foreach(script postinst prerm postrm)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/debian/${script}
    ${LDMPQ_DEB_CONTROL}/${script} @ONLY) # keeps the source's mode, 0755
endforeach()
# conffiles: the site's configuration, and whatever else a folder installs
# under /etc and names with
#   set_property(GLOBAL APPEND PROPERTY LDMPQ_CONFFILES /etc/...)
# (a logrotate file, say): dpkg keeps a site's changes to those.
set(conffiles "")
foreach(f ${LDMPQ_SITE_FILES})
  get_filename_component(name ${f} NAME)
  string(APPEND conffiles "${LDMPQ_CONFDIR}/${name}\n")
endforeach()
get_property(extra GLOBAL PROPERTY LDMPQ_CONFFILES)
foreach(f ${extra})
  string(APPEND conffiles "${f}\n")
endforeach()
file(WRITE ${LDMPQ_DEB_CONTROL}/conffiles "${conffiles}")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ldmpq)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "ldmpq maintainers <ldmpq@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "LDM-compatible product queue, server and utilities")
set(CPACK_PACKAGE_DESCRIPTION
  "A product queue server in the tradition of Unidata's LDM: ldmd (the
LDM-6 protocol), pqact (with -e for AWIPS's edexBridge), the queue utilities
(pqcreate, pqinsert, pqcat, ..., wasReceived), the protocol clients (notifyme,
ldmsend, ldmping, rtstats, pqsend, feedme), the ingesters (noaaportIngester,
gribinsert, pqing and its names), pqsurf, the operator's tools (ldmadmin,
regutil, scour, keep_running, ulogger, newlog, refresh_logging, uldbutil,
pqutil), the bridge to NATS JetStream (pq2nats, nats2pq), and the queue library
with its header and pkg-config file.  The package creates the system user ldm, its home /var/lib/ldm, a registry and a queue.")
# A directory of its own for the staging, and absolute destinations
# (/etc/ldm) staged, not written to the build host.
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "passwd, libssl-dev, libisal-dev")
# pqact finds the sub-matches of deterministic patterns with PCRE2
# (pqutils/pqact/submatch.h).
string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libpcre2-8-0")
# pqact's one-pass matcher runs on Hyperscan (pqutils/pqact/hsdb.h), which
# dpkg-shlibdeps finds too; named here so the package says it on amd64,
# where the build requires it.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libhyperscan5")
endif()
# "ldmadmin plotmetrics" draws with gnuplot; pq2nats and nats2pq talk to a
# NATS server, which may run on another host; nothing else needs them.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "gnuplot-nox, nats-server")
# "ldmadmin mkcert" makes the site's TLS key and certificate with openssl.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openssl")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${LDMPQ_DEB_CONTROL}/postinst ${LDMPQ_DEB_CONTROL}/prerm
  ${LDMPQ_DEB_CONTROL}/postrm ${LDMPQ_DEB_CONTROL}/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
include(CPack)
