# perfetto-summary.awk: `protoc --decode perfetto.protos.Trace` text of a
# `vmscope export --perfetto` file, summarised as one line per fact:
#   machine M            a packet of machine M (0: the host)
#   sched_switch M N     a packet of machine M with N sched_switch: its full
#                        events and its CompactSched entries (one
#                        switch_timestamp each)
#   thread PID TID       a thread track
#   begin NAME           an exit slice begins: its name, inline or the one
#                        its packet sequence interned (event_names, in that
#                        packet or an earlier one of the sequence)
#   end                  a slice ends
#   flows N              (last) flow ids that a host instant carries and a
#                        guest instant ends
/^packet \{/ { mid = 0; sw = 0; td = 0; tpid = ""; ttid = ""; type = ""; name = ""
	niid = ""; seq = ""; inev = 0; split("", defs); next }
/^  machine_id: / { mid = $2 }
/^  trusted_packet_sequence_id: / { seq = $2 }
/^      sched_switch \{/ { sw++ }
/^      switch_timestamp: / { sw++ }
/^  track_descriptor \{/ { td = 1 }
/^      pid: / { tpid = $2 }
/^      tid: / { ttid = $2 }
/^    type: / { type = $2 }
/^    name: / { name = $2 }
/^    name_iid: / { niid = $2 }
/^    event_names \{/ { inev = 1 }
inev && /^      iid: / { eiid = $2 }
inev && /^      name: / { defs[eiid] = $2 }
/^    \}/ { inev = 0 }
/^    flow_ids: / { step[$2]++ }
/^    terminating_flow_ids: / { term[$2]++ }
/^\}/ {
	for (i in defs) names[seq " " i] = defs[i]
	print "machine", mid
	if (sw) print "sched_switch", mid, sw
	if (td && ttid != "") print "thread", tpid, ttid
	if (type == "TYPE_SLICE_BEGIN") print "begin", (niid != "" ? names[seq " " niid] : name)
	if (type == "TYPE_SLICE_END") print "end"
}
END { n = 0; for (id in term) if (id in step) n++; print "flows", n }
