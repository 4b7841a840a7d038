package load

import "fmt"

// judge decides whether the client was the limit and explains late or
// dropped requests in one sentence.
func (r *Result) judge(cfg Config) {
	m := r.Measured
	offered := m.Sent() + m.Dropped
	cpuBusy := r.ClientCPU >= 90*float64(r.Cores)
	if cfg.Model == "open" && offered > 0 {
		behind := float64(m.Late+m.Dropped) / float64(offered)
		wake := float64(m.LateWake) / float64(offered)
		switch {
		case behind <= 0.001:
		case cpuBusy:
			r.ClientLimited = true
			r.Note = fmt.Sprintf("client CPU saturated (%.0f%% of %d cores) with %.2f%% of requests late or dropped: the load generator limited the rate", r.ClientCPU, r.Cores, 100*behind)
		case wake > 0.01:
			r.ClientLimited = true
			r.Note = fmt.Sprintf("%.2f%% of requests were sent late although a slot was free: the client could not keep the schedule (client CPU %.0f%% of %d cores)", 100*wake, r.ClientCPU, r.Cores)
		case 2*m.LateWake >= m.Late+m.Dropped:
			r.Note = fmt.Sprintf("%.2f%% of requests were sent more than %v late by the client itself (scheduling delay at %.0f%% client CPU); their latency includes the delay", 100*wake, cfg.LateAfter, r.ClientCPU)
		default:
			r.Note = fmt.Sprintf("%.2f%% of requests started late or were dropped because all %d in-flight slots were busy: the target fell behind the arrival rate (raise max_in_flight to keep offering it)", 100*behind, cfg.MaxInFlight)
		}
		return
	}
	if cpuBusy {
		r.ClientLimited = true
		r.Note = fmt.Sprintf("client CPU saturated (%.0f%% of %d cores): throughput may be limited by the load generator", r.ClientCPU, r.Cores)
	}
}
