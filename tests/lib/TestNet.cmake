# SPDX-License-Identifier: MIT
# The test network allocator: every test that opens sockets is registered with
# uroce_net_test(), which hands it a loopback /24 and a TCP/UDP port range of
# its own, so that the tests of one build run in parallel and two builds of
# the tree (two checkouts, two developers, CI beside a developer) run at the
# same time without meeting. It does not start anything; the shell side
# (tests/lib/common.sh) and the Python side (tests/lib/testnet.py) claim the
# allocation at run time and skip the test (exit 77) when it is taken.
#
# Scheme. A build directory owns one slot S in 0..19, a hash of
# CMAKE_BINARY_DIR unless -DUROCE_TEST_SLOT=S says otherwise. The N-th test
# registered in the build (N = 1..254) gets
#   loopback /24     127.(128+S).N.0/24           UROCE_TEST_NET=127.(128+S).N
#   private /24      10.(128+S).N.0/24            UROCE_TEST_PRIV_NET (only inside
#                                                 network namespaces the test creates)
#   private IPv6     fd75:e2e:(128+S):N::/64      UROCE_TEST_V6_NET (likewise)
#   ports            PORTS ports (default 8) from the slot's 512, 22528 + 512 S
#                    .. 22528 + 512 S + 511       UROCE_TEST_PORT_BASE, UROCE_TEST_PORT_COUNT
#   names            UROCE_TEST_SLOT=S and UROCE_TEST_INDEX=N, from which the
#                    helpers derive namespace and veth names
# The slots' second octets (128..147) and ports (22528..32767, below Linux's
# ephemeral range 32768..60999) stay clear of the addresses people use by
# hand (127.0.0.x) and of the fixed ones older trees used (127.0.85.x,
# 127.77.x, ports 14800.., 18515.., 21000..21799). Each build writes its
# allocation to ${CMAKE_BINARY_DIR}/uroce-testnet.txt.

set(UROCE_TEST_SLOTS 20)
set(UROCE_TEST_PORT_FIRST 22528)
set(UROCE_TEST_PORTS_PER_SLOT 512)

string(MD5 _uroce_dir_hash "${CMAKE_BINARY_DIR}")
string(SUBSTRING "${_uroce_dir_hash}" 0 7 _uroce_dir_hash)
math(EXPR _uroce_default_slot "0x${_uroce_dir_hash} % ${UROCE_TEST_SLOTS}")
set(UROCE_TEST_SLOT "${_uroce_default_slot}" CACHE STRING
    "Test network slot 0..19 of this build (default: a hash of the build directory)")
# A slot cached by a tree of the time there were 40 slots is taken again from the hash.
if(UROCE_TEST_SLOT MATCHES "^[0-9]+$" AND UROCE_TEST_SLOT GREATER_EQUAL UROCE_TEST_SLOTS
   AND UROCE_TEST_SLOT LESS 40)
  message(WARNING "UROCE_TEST_SLOT=${UROCE_TEST_SLOT} is past the ${UROCE_TEST_SLOTS} slots: "
                  "slot ${_uroce_default_slot} instead")
  set(UROCE_TEST_SLOT "${_uroce_default_slot}" CACHE STRING
      "Test network slot 0..19 of this build (default: a hash of the build directory)" FORCE)
endif()
if(NOT UROCE_TEST_SLOT MATCHES "^[0-9]+$" OR UROCE_TEST_SLOT GREATER_EQUAL UROCE_TEST_SLOTS)
  message(FATAL_ERROR "UROCE_TEST_SLOT=${UROCE_TEST_SLOT}: must be 0..${UROCE_TEST_SLOTS} - 1")
endif()
math(EXPR UROCE_TEST_OCTET "128 + ${UROCE_TEST_SLOT}")
math(EXPR UROCE_TEST_SLOT_PORT "${UROCE_TEST_PORT_FIRST} + ${UROCE_TEST_SLOT} * ${UROCE_TEST_PORTS_PER_SLOT}")
message(STATUS "tests: network slot ${UROCE_TEST_SLOT}: 127.${UROCE_TEST_OCTET}.N.0/24, "
               "ports from ${UROCE_TEST_SLOT_PORT}")

set_property(GLOBAL PROPERTY UROCE_TEST_NEXT_INDEX 1)
set_property(GLOBAL PROPERTY UROCE_TEST_NEXT_PORT ${UROCE_TEST_SLOT_PORT})
set(UROCE_TESTNET_FILE ${CMAKE_BINARY_DIR}/uroce-testnet.txt)
file(WRITE ${UROCE_TESTNET_FILE}
     "# slot ${UROCE_TEST_SLOT} of ${CMAKE_BINARY_DIR}\n# test loopback/24 ports\n")

# uroce_net_test(NAME name COMMAND cmd... [PORTS n] [LABELS l...] [TIMEOUT s]
#                [ENVIRONMENT VAR=value...])
# add_test() plus the test's allocation in its environment (the UROCE_TEST_*
# variables above), SKIP_RETURN_CODE 77 and the given properties. PORTS is
# how many ports the test may use, from UROCE_TEST_PORT_BASE on. Fails the
# configuration when the slot runs out of /24s or ports.
function(uroce_net_test)
  cmake_parse_arguments(PARSE_ARGV 0 a "" "NAME;PORTS;TIMEOUT" "COMMAND;LABELS;ENVIRONMENT")
  if(NOT a_NAME OR NOT a_COMMAND OR a_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "uroce_net_test: NAME and COMMAND needed, unknown: ${a_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT DEFINED a_PORTS)
    set(a_PORTS 8)
  endif()
  get_property(index GLOBAL PROPERTY UROCE_TEST_NEXT_INDEX)
  get_property(port GLOBAL PROPERTY UROCE_TEST_NEXT_PORT)
  math(EXPR next_index "${index} + 1")
  math(EXPR next_port "${port} + ${a_PORTS}")
  math(EXPR slot_end "${UROCE_TEST_SLOT_PORT} + ${UROCE_TEST_PORTS_PER_SLOT}")
  if(index GREATER 254 OR next_port GREATER slot_end)
    message(FATAL_ERROR "uroce_net_test(${a_NAME}): the slot's 254 /24s or "
                        "${UROCE_TEST_PORTS_PER_SLOT} ports are all given out")
  endif()
  set_property(GLOBAL PROPERTY UROCE_TEST_NEXT_INDEX ${next_index})
  set_property(GLOBAL PROPERTY UROCE_TEST_NEXT_PORT ${next_port})

  set(o ${UROCE_TEST_OCTET})
  set(env "UROCE_TEST_SLOT=${UROCE_TEST_SLOT}" "UROCE_TEST_INDEX=${index}"
          "UROCE_TEST_NET=127.${o}.${index}" "UROCE_TEST_PRIV_NET=10.${o}.${index}"
          "UROCE_TEST_V6_NET=fd75:e2e:${o}:${index}"
          "UROCE_TEST_PORT_BASE=${port}" "UROCE_TEST_PORT_COUNT=${a_PORTS}"
          "UROCE_TEST_LIB=${PROJECT_SOURCE_DIR}/tests/lib"
          "UROCE_BIN=${CMAKE_RUNTIME_OUTPUT_DIRECTORY}"
          "UROCE_LIB=${CMAKE_LIBRARY_OUTPUT_DIRECTORY}"
          ${a_ENVIRONMENT})
  add_test(NAME ${a_NAME} COMMAND ${a_COMMAND})
  set_tests_properties(${a_NAME} PROPERTIES SKIP_RETURN_CODE 77 ENVIRONMENT "${env}")
  if(a_LABELS)
    set_tests_properties(${a_NAME} PROPERTIES LABELS "${a_LABELS}")
  endif()
  if(a_TIMEOUT)
    set_tests_properties(${a_NAME} PROPERTIES TIMEOUT ${a_TIMEOUT})
  endif()
  math(EXPR last_port "${next_port} - 1")
  file(APPEND ${UROCE_TESTNET_FILE} "${a_NAME} 127.${o}.${index}.0/24 ${port}-${last_port}\n")
endfunction()
