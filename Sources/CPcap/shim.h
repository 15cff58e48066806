#ifndef PROTO_DISSECT_CPCAP_SHIM_H
#define PROTO_DISSECT_CPCAP_SHIM_H
#include <pcap/pcap.h>
#endif
