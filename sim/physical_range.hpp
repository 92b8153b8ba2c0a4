// Physical ranges of hardware figures read from files (what-if GPUs, YAML topologies). Outside them a value is a
// typo, not a what-if, and it would break the model rather than answer a question: 1B/s of NVLink overflows the
// event clock (2^63 ps is about 106 days), 1B/s of HBM gives a time-to-train of a million years. Such a value is
// refused at its key, with the range in the message (ConfigNode::as_bandwidth(range) and its siblings).
#pragma once

namespace ttsim {

struct PhysicalRange {
    double min, max;
    const char* text;  // the range as a user writes it, for the message
};

// HBM (bytes/s): 1 GB/s is below even one DDR4 channel (25 GB/s), far below any accelerator's memory; 100 TB/s is
// over ten times B200's 8 TB/s of HBM3e.
inline constexpr PhysicalRange kHbmBandwidthRange{1e9, 100e12, "1GB/s to 100TB/s"};
// One link or port, NVLink or network (bytes/s per direction): 1 Gb/s is the slowest Ethernet port still in a
// cluster; 100 Tb/s is over ten times NVLink5's 900 GB/s (7.2 Tb/s) per GPU and a hundred times an 800 Gb/s XDR
// port.
inline constexpr PhysicalRange kLinkBandwidthRange{1e9 / 8, 100e12 / 8, "1Gb/s to 100Tb/s"};
// One scale-out NIC port per GPU (NicSpeed: --nic, a sweep's network `nic`, a what-if GPU's `nic_bandwidth`):
// 1 Gb/s to 3.2 Tb/s (four XDR 800G ports; beyond any NIC announced).
inline constexpr PhysicalRange kNicBandwidthRange{1e9 / 8, 3.2e12 / 8, "1Gb/s to 3.2Tb/s"};
// One link's or switch's latency (seconds): 1 s is five times a transpacific round trip (~0.2 s); within a
// cluster a hop is 0.1-2 us. The cap also keeps a path's summed latency far inside the event clock.
inline constexpr PhysicalRange kLatencyRange{0.0, 1.0, "0s to 1s"};
// TDP per GPU: 10 W is below the smallest datacenter inference card (~40-75 W); 10 kW is over eight times
// GB200's 1.2 kW per GPU.
inline constexpr PhysicalRange kGpuPowerRange{10, 10e3, "10W to 10kW"};

}  // namespace ttsim
