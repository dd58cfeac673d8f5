/*
 * `--events` lists: names, systems and "all" select the right ids from the
 * compiled-in table; typos, empty items and empty lists are refused.
 */
#include <stdio.h>
#include <string.h>

#include "event_select.h"
#include "vmscope_events.h"

#include "../../tests/lib/check.h"

#define BIT(id) (UINT64_C(1) << (id))

static int sel(const char *list, uint64_t *m, char *why, size_t len)
{
	*m = 0xdeadbeef;
	return vmscope_events_select(list, vmscope_event_descs, VMSCOPE_NR_EVENTS,
				     m, why, len);
}

int main(void)
{
	uint64_t m, kvm = 0, sched = 0, all = 0;
	char why[160];

	for (unsigned int i = 0; i < VMSCOPE_NR_EVENTS; i++) {
		all |= BIT(i);
		if (!strcmp(vmscope_event_descs[i].system, "kvm"))
			kvm |= BIT(i);
		if (!strcmp(vmscope_event_descs[i].system, "sched"))
			sched |= BIT(i);
	}
	EXPECT(kvm && sched && (kvm & sched) == 0, "table has kvm and sched events");

	EXPECT(sel("kvm_exit", &m, why, sizeof(why)) == 0 &&
	       m == BIT(VMSCOPE_EV_kvm_exit), "one name: %#llx", (unsigned long long)m);
	EXPECT(sel("kvm_exit,kvm_entry", &m, why, sizeof(why)) == 0 &&
	       m == (BIT(VMSCOPE_EV_kvm_exit) | BIT(VMSCOPE_EV_kvm_entry)), "two names");
	EXPECT(sel("kvm", &m, why, sizeof(why)) == 0 && m == kvm, "system kvm");
	EXPECT(sel("sched,kvm_exit", &m, why, sizeof(why)) == 0 &&
	       m == (sched | BIT(VMSCOPE_EV_kvm_exit)), "system plus name");
	EXPECT(sel("all", &m, why, sizeof(why)) == 0 && m == all, "all");
	EXPECT(sel("kvm_exit,kvm_exit", &m, why, sizeof(why)) == 0 &&
	       m == BIT(VMSCOPE_EV_kvm_exit), "repeats are harmless");

	EXPECT(sel("kvm_exti", &m, why, sizeof(why)) == -1 && strstr(why, "kvm_exti"),
	       "typo refused, named: '%s'", why);
	EXPECT(m == 0xdeadbeef, "mask untouched on error");
	EXPECT(sel("", &m, why, sizeof(why)) == -1, "empty list refused");
	EXPECT(sel("kvm_exit,", &m, why, sizeof(why)) == -1, "trailing comma refused");
	EXPECT(sel(",kvm_exit", &m, why, sizeof(why)) == -1, "leading comma refused");
	EXPECT(sel("kvm_exit_", &m, why, sizeof(why)) == -1, "prefix match refused");
	EXPECT(sel("kvm_", &m, why, sizeof(why)) == -1, "partial name refused");
	EXPECT(vmscope_events_select("kvm", vmscope_event_descs, 0, &m, why,
				     sizeof(why)) == -1, "no descriptors: nothing matches");

	return check_result("test_event_select");
}
