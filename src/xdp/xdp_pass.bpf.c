/* Passes every frame to the kernel. Attached to the hosts' ends of veths
 * whose other end runs the switch program (NetnsCluster with xdp_switch):
 * veth delivers an XDP_TX frame only to a peer whose NAPI is on, which an
 * XDP program turns on. (GRO turns it on too, but on kernel 6.18 the
 * switch's answers taken that way never reached the host's sockets.) */
#include <linux/bpf.h>

#define SEC(name) __attribute__((section(name), used))

char LICENSE[] SEC("license") = "GPL";

SEC("xdp")
int libra_pass(struct xdp_md *ctx) {
  (void)ctx;
  return XDP_PASS;
}
