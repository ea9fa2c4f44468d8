# Network tests of the LDM-6 server (ldmd): real processes on 127.0.0.1
# and ::1, each test with its own queue, registry file and free ports,
# bounded waits, and everything it starts killed.  The unit tests of its
# libraries are in test/server (ldmd/server) and test/proto (ldmd/proto,
# its RPC transport included).
if(TARGET ldmproto)
  # ldm6_peer: the scriptable LDM-6 peer the server tests drive.
  add_executable(ldm6_peer ${CMAKE_CURRENT_LIST_DIR}/ldm6_peer.c)
  target_link_libraries(ldm6_peer PRIVATE ldmproto)

  # net_NAME runs net/NAME.sh against ldmd, with its timeout in seconds.
  if(TARGET ldmd)
    set(_args $<TARGET_FILE:ldmd> $<TARGET_FILE:ldm6_peer>)
    pq_script_suite(net LABEL net ENVIRONMENT ${PQ_TESTDATA_ENV} ARGS ${_args}
      TESTS
        feed 120
        hiya 120
        access 60
        robust 90
        process 120
        # A clean stop with connections waiting in poll: no ERROR line.
        process_stop 60
        # The downstream side: requesters, resume, supervision, relay chains.
        requester 120
        # A requester its upstream refuses: the denial logged, the back-off.
        denied 60
        resume 180
        # A full file system for the resume files; 77 means skipped.
        resumefull 120
        silence 120
        alternate 120
        supervise 120
        chain 240
        # Replays the capture of real LDM 6.15 peers in test/vectors/ldm6.
        capture 60
        # The server's faults (docs/protocol.md, "The ldmd process" and
        # "Records that are not what they declare"); 77 means skipped.
        daemon 60
        emfile 90
        lengths 90
        # Limits against abuse (docs/security.md, "Abuse").
        connlimits 90
        privdrop 60
        # The same with the build folder where only root may enter.
        privdrop_private 60
        filemodes 60
        prodlimit 60
        # Announced products reserve nothing until their data comes.
        announce 90
        antidos 120
        names 60
        held 120
        # The feed hubs (docs/protocol.md, section 6.9): no hub answers.
        hub_fallback 90
        # Zero-copy sending: integrity, a stalled downstream's pins, kill -9
        # (docs/protocol.md, section 6.8).
        zerocopy 240
        zerocopy_tls 120
        # Patterns from peers, and a stop whatever a child is matching
        # (docs/security.md, "Patterns from peers").
        peerpatterns 60
        busystop 90
        # The flush at the end of the queue does not wait for its answer.
        flush 90
        slowmatch 90
        # The feed hub: a slow pattern holds back no other feed; the last
        # line of a feed it served counts its products after a stop; a
        # downstream's records are bounded as in a connection process;
        # every message it sent at once is read.
        hub 120
        # The feed hub (ldmd/server/hub.h): classes and
        # filters of many feeds, a stalled downstream beside a normal one.
        hub_classes 90
        hub_stall 150
        # TLS feeds stay in their connection processes, plain ones go to
        # the hub.
        hub_tls 120)
    if(TARGET ldmsend AND TARGET notifyme AND TARGET ldmping)
      # TLS and plain LDM-6 on one port (docs/security.md, "Tests").
      pq_script_test(net_tls ${CMAKE_CURRENT_LIST_DIR}/tls.sh
        TIMEOUT 180 LABELS net ENVIRONMENT ${PQ_TESTDATA_ENV}
        ARGS ${_args} $<TARGET_FILE:ldmping> $<TARGET_FILE:notifyme>
        $<TARGET_FILE:ldmsend>)
    endif()
    if(TARGET notifyme)
      # Control bytes of identifiers escaped in the logs (docs/security.md).
      pq_script_test(net_logescape ${CMAKE_CURRENT_LIST_DIR}/logescape.sh
        TIMEOUT 60 LABELS net ENVIRONMENT ${PQ_TESTDATA_ENV}
        ARGS ${_args} $<TARGET_FILE:notifyme>)
    endif()
    if(TARGET pqclihelper)
      # Damaged products are not sent (docs/security.md, "Damaged
      # products"); pqclihelper says where a product's data lies.
      pq_script_test(net_damaged ${CMAKE_CURRENT_LIST_DIR}/damaged.sh
        TIMEOUT 120 LABELS net ENVIRONMENT ${PQ_TESTDATA_ENV}
        ARGS ${_args} $<TARGET_FILE:pqclihelper>)
    endif()
    if(TARGET pqcheck)
      # kill -9 of the feed hub (ldmd/server/hub.h) mid-send: a new hub,
      # every product relayed once, the queue sound.
      pq_script_test(net_hub_kill ${CMAKE_CURRENT_LIST_DIR}/hub_kill.sh
        TIMEOUT 120 LABELS net ENVIRONMENT ${PQ_TESTDATA_ENV}
        ARGS ${_args} $<TARGET_FILE:pqcheck>)
    endif()
    if(TARGET ldmsend)
      pq_script_test(net_undelivered ${CMAKE_CURRENT_LIST_DIR}/undelivered.sh
        TIMEOUT 90 LABELS net ENVIRONMENT ${PQ_TESTDATA_ENV}
        ARGS ${_args} $<TARGET_FILE:ldmsend>)
    endif()
  endif()
endif()
