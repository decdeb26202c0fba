// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The QP state machine of the IB specification (chapter 10.3, and the
 * table of ibv_modify_qp(3)): for each transition, the attributes a QP of
 * each transport type must and may carry.  Anything else is -EINVAL and
 * leaves the QP unchanged.
 */
#include <uabi/core.h>

enum { T_UD, T_UC, T_RC, T_XI, T_XT, T_NUM };	/* XI/XT: XRC send/recv */

struct transition {
	bool valid;
	u32 req[T_NUM];
	u32 opt[T_NUM];
};

#define S(x) UABI_QP_##x
#define INIT_ATTRS_RC (S(PKEY_INDEX) | S(PORT) | S(ACCESS_FLAGS))
#define INIT_ATTRS_UD (S(PKEY_INDEX) | S(PORT) | S(QKEY))
#define RTR_REQ_UC (S(AV) | S(PATH_MTU) | S(DEST_QPN) | S(RQ_PSN))
#define RTR_REQ_RC (RTR_REQ_UC | S(MAX_DEST_RD_ATOMIC) | S(MIN_RNR_TIMER))
#define RTR_OPT (S(ALT_PATH) | S(ACCESS_FLAGS) | S(PKEY_INDEX))
#define RTS_REQ_RC (S(TIMEOUT) | S(RETRY_CNT) | S(RNR_RETRY) | S(SQ_PSN) | \
		    S(MAX_QP_RD_ATOMIC))
#define RTS_OPT_UC (S(CUR_STATE) | S(ALT_PATH) | S(ACCESS_FLAGS) | \
		    S(PATH_MIG_STATE))
#define RTS_OPT_RC (RTS_OPT_UC | S(MIN_RNR_TIMER))
#define UD_RTS_OPT (S(CUR_STATE) | S(QKEY))
#define SQD_OPT_RC (S(PORT) | S(AV) | S(TIMEOUT) | S(RETRY_CNT) | \
		    S(RNR_RETRY) | S(MAX_QP_RD_ATOMIC) | S(MAX_DEST_RD_ATOMIC) | \
		    S(ALT_PATH) | S(ACCESS_FLAGS) | S(PKEY_INDEX) | \
		    S(MIN_RNR_TIMER) | S(PATH_MIG_STATE))

#define ALL_TYPES(m) { m, m, m, m, m }

static const struct transition table[UABI_QPS_NUM][UABI_QPS_NUM] = {
	[UABI_QPS_RESET] = {
		[UABI_QPS_RESET] = { .valid = true },
		[UABI_QPS_INIT] = {
			.valid = true,
			.req = { [T_UD] = INIT_ATTRS_UD, [T_UC] = INIT_ATTRS_RC,
				 [T_RC] = INIT_ATTRS_RC, [T_XI] = INIT_ATTRS_RC,
				 [T_XT] = INIT_ATTRS_RC },
		},
	},
	[UABI_QPS_INIT] = {
		[UABI_QPS_INIT] = {
			.valid = true,
			.opt = { [T_UD] = INIT_ATTRS_UD, [T_UC] = INIT_ATTRS_RC,
				 [T_RC] = INIT_ATTRS_RC, [T_XI] = INIT_ATTRS_RC,
				 [T_XT] = INIT_ATTRS_RC },
		},
		[UABI_QPS_RTR] = {
			.valid = true,
			.req = { [T_UC] = RTR_REQ_UC, [T_RC] = RTR_REQ_RC,
				 [T_XI] = RTR_REQ_UC, [T_XT] = RTR_REQ_RC },
			.opt = { [T_UD] = S(PKEY_INDEX) | S(QKEY),
				 [T_UC] = RTR_OPT, [T_RC] = RTR_OPT,
				 [T_XI] = RTR_OPT, [T_XT] = RTR_OPT },
		},
	},
	[UABI_QPS_RTR] = {
		[UABI_QPS_RTS] = {
			.valid = true,
			.req = { [T_UD] = S(SQ_PSN), [T_UC] = S(SQ_PSN),
				 [T_RC] = RTS_REQ_RC, [T_XI] = RTS_REQ_RC,
				 [T_XT] = S(TIMEOUT) | S(SQ_PSN) },
			.opt = { [T_UD] = UD_RTS_OPT, [T_UC] = RTS_OPT_UC,
				 [T_RC] = RTS_OPT_RC, [T_XI] = RTS_OPT_UC,
				 [T_XT] = RTS_OPT_RC },
		},
	},
	[UABI_QPS_RTS] = {
		[UABI_QPS_RTS] = {
			.valid = true,
			.opt = { [T_UD] = UD_RTS_OPT, [T_UC] = RTS_OPT_UC,
				 [T_RC] = RTS_OPT_RC, [T_XI] = RTS_OPT_UC,
				 [T_XT] = RTS_OPT_RC },
		},
		[UABI_QPS_SQD] = {
			.valid = true,
			.opt = ALL_TYPES(S(EN_SQD_ASYNC_NOTIFY)),
		},
	},
	[UABI_QPS_SQD] = {
		[UABI_QPS_RTS] = {
			.valid = true,
			.opt = { [T_UD] = UD_RTS_OPT, [T_UC] = RTS_OPT_UC,
				 [T_RC] = RTS_OPT_RC, [T_XI] = RTS_OPT_UC,
				 [T_XT] = RTS_OPT_RC },
		},
		[UABI_QPS_SQD] = {
			.valid = true,
			.opt = { [T_UD] = S(PKEY_INDEX) | S(QKEY),
				 [T_UC] = S(AV) | S(ALT_PATH) | S(ACCESS_FLAGS) |
					  S(PKEY_INDEX) | S(PATH_MIG_STATE),
				 [T_RC] = SQD_OPT_RC,
				 [T_XI] = SQD_OPT_RC & ~S(MAX_DEST_RD_ATOMIC) &
					  ~S(MIN_RNR_TIMER),
				 [T_XT] = SQD_OPT_RC & ~S(RETRY_CNT) &
					  ~S(RNR_RETRY) & ~S(MAX_QP_RD_ATOMIC) },
		},
	},
	[UABI_QPS_SQE] = {
		[UABI_QPS_RTS] = {
			.valid = true,
			.opt = { [T_UD] = UD_RTS_OPT,
				 [T_UC] = S(CUR_STATE) | S(ACCESS_FLAGS) },
		},
	},
};

static int type_index(u32 qp_type)
{
	switch (qp_type) {
	case UABI_QPT_UD: return T_UD;
	case UABI_QPT_UC: return T_UC;
	case UABI_QPT_RC: return T_RC;
	case UABI_QPT_XRC_SEND: return T_XI;
	case UABI_QPT_XRC_RECV: return T_XT;
	}
	return -1;
}

/* Attributes a transition accepts beyond STATE, or 0 if it is invalid. */
static bool transition_masks(u32 qp_type, u32 cur, u32 next, u32 *req, u32 *opt)
{
	int t = type_index(qp_type);

	if (t < 0 || cur >= UABI_QPS_NUM || next >= UABI_QPS_NUM)
		return false;
	/* Any state may go to RESET, and any but RESET to ERR (Linux's
	 * qp_state_table has no RESET -> ERR either). */
	if (next == UABI_QPS_RESET || (next == UABI_QPS_ERR && cur != UABI_QPS_RESET)) {
		*req = 0;
		*opt = 0;
		return true;
	}
	if (!table[cur][next].valid)
		return false;
	*req = table[cur][next].req[t];
	*opt = table[cur][next].opt[t];
	return true;
}

int uabi_qp_check_transition(u32 qp_type, u32 cur, u32 next, u32 mask)
{
	u32 req, opt;

	if (!transition_masks(qp_type, cur, next, &req, &opt))
		return -EINVAL;
	if ((mask & req) != req)
		return -EINVAL;
	if (mask & ~(req | opt | UABI_QP_STATE))
		return -EINVAL;
	return 0;
}

/* --------------------------------------------------------- attribute values */
static int check_values(struct uabi_device *dev, const struct uabi_qp *qp,
			const struct uabi_qp_attr *a, u32 mask)
{
	u32 psn_mask = (1u << 24) - 1;
	int ret;

	if ((mask & S(PORT)) &&
	    (a->port_num < 1 || a->port_num > dev->attr.phys_port_cnt))
		return -EINVAL;
	if ((mask & S(PKEY_INDEX)) && a->pkey_index >= dev->attr.max_pkeys)
		return -EINVAL;
	/*
	 * qp_access_flags: every bit is accepted, as Linux's modify_qp passes
	 * them all to the driver, which ignores what it does not implement
	 * (MW_BIND, RELAXED_ORDERING...).  The value is kept as given.
	 */
	if ((mask & S(PATH_MTU)) &&
	    (a->path_mtu < UABI_MTU_256 || a->path_mtu > UABI_MTU_4096))
		return -EINVAL;
	if ((mask & S(AV))) {
		ret = uabi_check_ah_attr(dev, &a->ah_attr);
		if (ret)
			return ret;
	}
	if ((mask & S(ALT_PATH))) {
		ret = uabi_check_ah_attr(dev, &a->alt_ah_attr);
		if (ret)
			return ret;
		if (a->alt_port_num < 1 || a->alt_port_num > dev->attr.phys_port_cnt ||
		    a->alt_pkey_index >= dev->attr.max_pkeys || a->alt_timeout > 31)
			return -EINVAL;
	}
	if ((mask & S(DEST_QPN)) && (a->dest_qp_num & ~psn_mask))
		return -EINVAL;
	if ((mask & S(RQ_PSN)) && (a->rq_psn & ~psn_mask))
		return -EINVAL;
	if ((mask & S(SQ_PSN)) && (a->sq_psn & ~psn_mask))
		return -EINVAL;
	if ((mask & S(TIMEOUT)) && a->timeout > 31)
		return -EINVAL;
	if ((mask & S(MIN_RNR_TIMER)) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & S(RETRY_CNT)) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & S(RNR_RETRY)) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & S(MAX_QP_RD_ATOMIC)) &&
	    a->max_rd_atomic > dev->attr.max_qp_init_rd_atom)
		return -EINVAL;
	if ((mask & S(MAX_DEST_RD_ATOMIC)) &&
	    a->max_dest_rd_atomic > dev->attr.max_qp_rd_atom)
		return -EINVAL;
	if ((mask & S(PATH_MIG_STATE)) && a->path_mig_state > UABI_MIG_ARMED)
		return -EINVAL;
	if ((mask & S(EN_SQD_ASYNC_NOTIFY)) && a->en_sqd_async_notify > 1)
		return -EINVAL;
	return 0;
}

static void apply(struct uabi_qp *qp, const struct uabi_qp_attr *a, u32 mask,
		  u32 next)
{
	struct uabi_qp_attr *q = &qp->attr;

#define COPY(bit, field) do { if (mask & S(bit)) q->field = a->field; } while (0)
	COPY(ACCESS_FLAGS, qp_access_flags);
	COPY(PKEY_INDEX, pkey_index);
	COPY(PORT, port_num);
	COPY(QKEY, qkey);
	COPY(AV, ah_attr);
	COPY(PATH_MTU, path_mtu);
	COPY(TIMEOUT, timeout);
	COPY(RETRY_CNT, retry_cnt);
	COPY(RNR_RETRY, rnr_retry);
	COPY(RQ_PSN, rq_psn);
	COPY(MAX_QP_RD_ATOMIC, max_rd_atomic);
	COPY(MIN_RNR_TIMER, min_rnr_timer);
	COPY(SQ_PSN, sq_psn);
	COPY(MAX_DEST_RD_ATOMIC, max_dest_rd_atomic);
	COPY(PATH_MIG_STATE, path_mig_state);
	COPY(DEST_QPN, dest_qp_num);
	COPY(EN_SQD_ASYNC_NOTIFY, en_sqd_async_notify);
#undef COPY
	if (mask & S(ALT_PATH)) {
		q->alt_ah_attr = a->alt_ah_attr;
		q->alt_port_num = a->alt_port_num;
		q->alt_pkey_index = a->alt_pkey_index;
		q->alt_timeout = a->alt_timeout;
	}
	if (next == UABI_QPS_RESET) {
		/* Back to a fresh QP: attributes forgotten, caps kept. */
		struct uabi_qp_cap cap = q->cap;

		memset(q, 0, sizeof(*q));
		q->cap = cap;
	}
	qp->state = next;
	q->qp_state = next;
	q->cur_qp_state = next;
}

int uabi_qp_modify(struct uabi_device *dev, struct uabi_qp *qp,
		   const struct uabi_qp_attr *attr, u32 mask)
{
	u32 cur = qp->state;
	u32 next = (mask & S(STATE)) ? attr->qp_state : cur;
	int ret;

	if (mask & ~UABI_QP_ATTR_MASK_ALL)
		return -EINVAL;
	/*
	 * Each half of XRC lacks one side of RC: what only the other side
	 * uses is ignored, as Linux's uverbs modify_qp_mask() does, so that
	 * programs that modify XRC QPs with RC's masks keep working.
	 */
	if (qp->qp_type == UABI_QPT_XRC_SEND)
		mask &= ~(S(MAX_DEST_RD_ATOMIC) | S(MIN_RNR_TIMER));
	else if (qp->qp_type == UABI_QPT_XRC_RECV)
		mask &= ~(S(MAX_QP_RD_ATOMIC) | S(RETRY_CNT) | S(RNR_RETRY));
	if ((mask & S(CUR_STATE)) && attr->cur_qp_state != cur)
		return -EINVAL;
	ret = uabi_qp_check_transition(qp->qp_type, cur, next, mask);
	if (ret)
		return ret;
	ret = check_values(dev, qp, attr, mask);
	if (ret)
		return ret;
	if (dev->ops->modify_qp) {
		ret = dev->ops->modify_qp(dev, qp, attr, mask);
		if (ret)
			return ret;
	}
	apply(qp, attr, mask, next);
	/*
	 * An XRC receive QP is tied to SRQs: entering ERR is the IB "last
	 * WQE reached" affiliated event, for every context registered on it
	 * (they all hold it; callers of a shared QP hold dev->lock).
	 */
	if (qp->qp_type == UABI_QPT_XRC_RECV && cur != UABI_QPS_ERR && next == UABI_QPS_ERR)
		uabi_raise_qp_event_locked(dev, qp, NULL, UABI_EVENT_QP_LAST_WQE_REACHED);
	return 0;
}

/*
 * Create-with-attributes: walk RESET -> INIT -> RTR -> RTS up to
 * attr->qp_state, giving each step the part of @mask it accepts.  Every
 * bit of @mask must be used by some step, and the whole walk is checked
 * before the first step is applied.
 */
int uabi_qp_walk_to_state(struct uabi_device *dev, struct uabi_qp *qp,
			  const struct uabi_qp_attr *attr, u32 mask)
{
	u32 target = attr->qp_state;
	u32 step_mask[UABI_QPS_RTS + 1];
	u32 used = S(STATE), s;
	int ret;

	if (!(mask & S(STATE)) || target < UABI_QPS_INIT || target > UABI_QPS_RTS ||
	    (mask & S(CUR_STATE)))
		return -EINVAL;
	for (s = UABI_QPS_RESET; s < target; s++) {
		u32 req, opt;

		if (!transition_masks(qp->qp_type, s, s + 1, &req, &opt))
			return -EINVAL;
		step_mask[s] = (mask & (req | opt)) | S(STATE);
		if ((step_mask[s] & req) != req)
			return -EINVAL;
		used |= step_mask[s];
	}
	if (mask & ~used)
		return -EINVAL;
	ret = check_values(dev, qp, attr, mask);
	if (ret)
		return ret;
	for (s = UABI_QPS_RESET; s < target; s++) {
		struct uabi_qp_attr a = *attr;

		a.qp_state = s + 1;
		ret = uabi_qp_modify(dev, qp, &a, step_mask[s]);
		if (ret)
			return ret;
	}
	return 0;
}
