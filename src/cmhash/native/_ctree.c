/* cmhash.native._ctree: the position tree of parse/events.py, built in C from libyaml.
 *
 * The libyaml path of events.py makes a Python event object and two Mark objects for
 * every YAML event and then turns them into tree nodes; that crossing is most of a large
 * run's parse time. This module runs the same library (libyaml) over the same UTF-8
 * text and makes the tree nodes directly, so the offsets, values and styles are libyaml's
 * own, exactly as through PyYAML.
 *
 * It builds only the common case. Anything else -- a syntax error, an anchor, an alias,
 * a tag, a scalar over the size limit, nesting over the depth limit, text that is not
 * UTF-8-encodable -- returns None, and events.py parses the chunk again on its own path,
 * which reports errors and handles the rest exactly as before. So this module never
 * decides anything on its own; it is only a faster way to the same tree. Two extras: a
 * plain mapping gets tree.entries()' key index (_dict) as it is built, and Python signal
 * handlers run every 4,096 events, as they would between PyYAML's events.
 *
 * build(text, base, node_type, kinds, max_depth, max_scalar) -> list[Node] | None
 *   kinds: the (scalar, seq, map) kind strings of parse/tree.py.
 *
 * It also holds the self-check of edit/treecheck.py (check_edit, below): the edited
 * document's events walked against the original tree, with no second tree made. That
 * one does decide, but only "the same": anything else is "cannot tell", and verify.py,
 * the reference, decides.
 *
 * check_edit(old_root, new_text, node_type, kinds, template_path, key, value) -> True | None
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h> /* offsetof */
#include <yaml.h>
#if PY_VERSION_HEX >= 0x030C0000 /* the member types' public names since 3.12 */
#define MEMBER_OBJECT_EX Py_T_OBJECT_EX
#define MEMBER_SSIZE Py_T_PYSSIZET
#else
#include <structmember.h>
#define MEMBER_OBJECT_EX T_OBJECT_EX
#define MEMBER_SSIZE T_PYSSIZET
#endif

/* Node's __slots__: the objects first, then the two offsets (C integers in our Node). */
enum { S_KIND, S_VALUE, S_STYLE, S_TAG, S_ANCHOR, S_DICT, S_START, S_END, N_SLOTS };
#define N_OBJECT_SLOTS S_START
static const char *const SLOT_NAMES[N_SLOTS] = {
    "kind", "value", "style", "tag", "anchor", "_dict", "start", "end",
};

/* ---------------------------------------------------------------- Node
 *
 * tree.Node itself when this module is there (tree._PyNode, its reference, is the same
 * in Python): eight slots and is_null. Tracked by the cyclic collector (traverse, clear):
 * a tree is acyclic (children never point up, an alias only back to an earlier node;
 * events.py unlinks the aliases of a tree it refuses for a recursive one), but its slots
 * and the lists in them can be written from Python, and a cycle made there is freed, as
 * with any Python object. (The console script turns the collector off: what that costs
 * a big run is the tracking, about 1 % of one.) Its offsets are C integers (Python ints
 * only when read), not two int objects a node. Node(kind, start, end, value, style, tag,
 * anchor) sets _dict to None, as _PyNode.__init__ does; with no arguments every other
 * slot is unset (as _PyNode.__new__ leaves them) and the offsets are 0. */

typedef struct {
    PyObject_HEAD
    PyObject *slots[N_OBJECT_SLOTS]; /* in SLOT_NAMES order */
    Py_ssize_t start, end;
} NodeObject;

static PyMemberDef node_members[N_SLOTS + 1];
static PyObject *NULL_WORDS, *NULL_TAG, *SCALAR_KIND; /* tree._NULLS, the null tag, "scalar" */
static PyObject *EMPTY; /* "" */

static PyObject *
node_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"kind", "start", "end", "value", "style", "tag", "anchor", NULL};
    PyObject *v[5] = {NULL};
    Py_ssize_t start = 0, end = 0;
    if (PyTuple_GET_SIZE(args) != 0 || (kwds != NULL && PyDict_GET_SIZE(kwds) != 0)) {
        if (!PyArg_ParseTupleAndKeywords(args, kwds, "OnnOOOO:Node", names, &v[0], &start,
                                         &end, &v[1], &v[2], &v[3], &v[4]))
            return NULL;
    }
    NodeObject *self = (NodeObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->start = start;
    self->end = end;
    if (v[0] != NULL) {
        const int order[5] = {S_KIND, S_VALUE, S_STYLE, S_TAG, S_ANCHOR};
        for (int i = 0; i < 5; i++)
            self->slots[order[i]] = Py_NewRef(v[i]);
        self->slots[S_DICT] = Py_NewRef(Py_None);
    }
    return (PyObject *)self;
}

static int
node_traverse(PyObject *self, visitproc visit, void *arg)
{
    NodeObject *n = (NodeObject *)self;
    for (int i = 0; i < N_OBJECT_SLOTS; i++)
        Py_VISIT(n->slots[i]);
    return 0;
}

static int
node_clear(PyObject *self)
{
    NodeObject *n = (NodeObject *)self;
    for (int i = 0; i < N_OBJECT_SLOTS; i++)
        Py_CLEAR(n->slots[i]);
    return 0;
}

static void
node_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    node_clear(self);
    Py_TYPE(self)->tp_free(self);
}

/* tree._PyNode.is_null, step by step (an unset slot is an AttributeError there too) */
static PyObject *
node_slot(NodeObject *n, int i)
{
    if (n->slots[i] == NULL)
        PyErr_Format(PyExc_AttributeError, "'Node' object has no attribute '%s'", SLOT_NAMES[i]);
    return n->slots[i];
}

static PyObject *
node_is_null(PyObject *self, void *Py_UNUSED(closure))
{
    NodeObject *n = (NodeObject *)self;
    PyObject *kind = node_slot(n, S_KIND), *x;
    if (kind == NULL)
        return NULL;
    int r = PyObject_RichCompareBool(kind, SCALAR_KIND, Py_EQ);
    if (r <= 0)
        return r < 0 ? NULL : Py_NewRef(Py_False);
    if ((x = node_slot(n, S_STYLE)) == NULL)
        return NULL;
    if (x != Py_None)
        Py_RETURN_FALSE;
    if ((x = node_slot(n, S_VALUE)) == NULL)
        return NULL;
    Py_INCREF(x); /* (held: a value's __eq__ may set the slot again) */
    r = PySet_Contains(NULL_WORDS, x);
    Py_DECREF(x);
    if (r < 0)
        return NULL;
    if (!r)
        Py_RETURN_FALSE;
    if ((x = node_slot(n, S_TAG)) == NULL)
        return NULL;
    if (x == Py_None)
        Py_RETURN_TRUE;
    r = PyObject_RichCompareBool(x, NULL_TAG, Py_EQ);
    return r < 0 ? NULL : PyBool_FromLong(r);
}

static PyObject *
node_repr(PyObject *self)
{
    NodeObject *n = (NodeObject *)self;
    PyObject *k = n->slots[S_KIND];
    return PyUnicode_FromFormat("Node(%S, %zd-%zd)", k ? k : Py_None, n->start, n->end);
}

static PyGetSetDef node_getset[] = {
    {"is_null", node_is_null, NULL, "YAML's null: a plain ~, null, Null, NULL or nothing", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject NodeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cmhash.native._ctree.Node",
    .tp_basicsize = sizeof(NodeObject),
    .tp_dealloc = node_dealloc,
    .tp_repr = node_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "tree.Node in C: the same slots",
    .tp_traverse = node_traverse,
    .tp_clear = node_clear,
    .tp_members = node_members,
    .tp_getset = node_getset,
    .tp_new = node_new,
};

/* A Node's object slot i: build() and the readers below take no other class than the
 * C Node (a Python __slots__ class would need its member descriptors' offsets, which only
 * CPython's private API tells). */
#define SLOT(node, i) (((NodeObject *)(node))->slots[i])
#define IS_NODE(o) (Py_TYPE(o) == &NodeType)

/* 0 when ``type`` is the C Node, else -1 with a TypeError. */
static int
read_layout(PyTypeObject *type)
{
    if (type == &NodeType)
        return 0;
    PyErr_SetString(PyExc_TypeError,
                    "_ctree: builds and reads its own Node (cmhash.native._ctree.Node) only");
    return -1;
}

/* A new Node; steals the references to value and style. */
static PyObject *
new_node(PyObject *kind, Py_ssize_t start, Py_ssize_t end, PyObject *value, PyObject *style)
{
    PyObject *node = value == NULL || style == NULL ? NULL : NodeType.tp_alloc(&NodeType, 0);
    if (node == NULL) {
        Py_XDECREF(value);
        Py_XDECREF(style);
        return NULL;
    }
    ((NodeObject *)node)->start = start;
    ((NodeObject *)node)->end = end; /* -1 while a collection is open */
    SLOT(node, S_KIND) = Py_NewRef(kind);
    SLOT(node, S_VALUE) = value;
    SLOT(node, S_STYLE) = style;
    SLOT(node, S_TAG) = Py_NewRef(Py_None);
    SLOT(node, S_ANCHOR) = Py_NewRef(Py_None);
    SLOT(node, S_DICT) = Py_NewRef(Py_None);
    return node;
}

/* Scalar styles as PyYAML reports them, with plain as None (events.py: ev.style or None),
 * by libyaml's yaml_scalar_style_t (NULL: not a style), for the builder and check_edit. */
static PyObject *STYLES[YAML_FOLDED_SCALAR_STYLE + 1];

static PyObject *
scalar_style(yaml_scalar_style_t style)
{
    PyObject *s = style <= YAML_FOLDED_SCALAR_STYLE ? STYLES[style] : NULL;
    return Py_NewRef(s != NULL ? s : Py_None);
}

static PyObject *MERGE_KEY;   /* "<<" */
static PyObject *STAR;        /* "*": a trie step over every list item (refs.py) */
static PyObject *METADATA_KEY, *ANNOTATIONS_KEY; /* check_edit's levels */

/* An open mapping or sequence: its node and the children read so far -- for a mapping,
 * its (key, value) pairs, a key waiting for its value, and tree.entries()' key index as
 * long as the mapping is plain (see add_pair). */
typedef struct {
    PyObject *node;
    PyObject *children; /* list: the items, or the pairs */
    PyObject *key;      /* a mapping's key read, its value not yet (NULL: none) */
    PyObject *index;    /* dict, or NULL: not plain */
    int is_map;
} frame_t;

/* Why a build stops: NONE keeps going; BAIL hands the chunk to events.py; FAIL is a
 * Python exception (out of memory). */
enum { NONE, BAIL, FAIL };

typedef struct {
    frame_t *stack;
    Py_ssize_t depth, cap, max_depth;
    PyObject *roots;
    PyObject *scalar_kind;
    PyObject *text;      /* the chunk (borrowed), for single_pair */
    Py_ssize_t bom;      /* 1 when it starts with a byte-order mark, which marks skip */
} builder_t;

/* A mapping's next pair, and its key in the index while the mapping is plain: every
 * key a scalar, no '<<' merge, no duplicate. Anything else drops the index and leaves it
 * to entries(), which applies merges and refuses duplicates when a mapping is first
 * read, as before. Steals key and value. */
static int
add_pair(builder_t *b, frame_t *f, PyObject *key, PyObject *value)
{
    PyObject *pair = PyTuple_New(2);
    if (pair == NULL) {
        Py_DECREF(key);
        Py_DECREF(value);
        return FAIL;
    }
    PyTuple_SET_ITEM(pair, 0, key);
    PyTuple_SET_ITEM(pair, 1, value);
    if (PyList_Append(f->children, pair) < 0) {
        Py_DECREF(pair);
        return FAIL;
    }
    if (f->index != NULL) {
        PyObject *name = SLOT(key, S_VALUE);
        Py_ssize_t before = PyDict_GET_SIZE(f->index);
        if (SLOT(key, S_KIND) != b->scalar_kind || !PyUnicode_CheckExact(name) ||
            (SLOT(key, S_STYLE) == Py_None && PyUnicode_Compare(name, MERGE_KEY) == 0))
            Py_CLEAR(f->index);
        else if (PyDict_SetDefault(f->index, name, pair) == NULL) {
            Py_DECREF(pair);
            return FAIL;
        }
        else if (PyDict_GET_SIZE(f->index) == before) /* a duplicate key */
            Py_CLEAR(f->index);
    }
    Py_DECREF(pair);
    return NONE;
}

static int
append(builder_t *b, PyObject *node)
{
    if (b->depth == 0) {
        int rc = PyList_Append(b->roots, node);
        Py_DECREF(node);
        return rc < 0 ? FAIL : NONE;
    }
    frame_t *f = &b->stack[b->depth - 1];
    if (!f->is_map) {
        int rc = PyList_Append(f->children, node);
        Py_DECREF(node);
        return rc < 0 ? FAIL : NONE;
    }
    if (f->key == NULL) {
        f->key = node;
        return NONE;
    }
    PyObject *key = f->key;
    f->key = NULL;
    return add_pair(b, f, key, node);
}

static int
open_collection(builder_t *b, PyObject *kind, Py_ssize_t start, int flow, int is_map)
{
    PyObject *children = PyList_New(0), *node = NULL, *index = NULL;
    int why = FAIL;
    if (children == NULL)
        return FAIL;
    node = new_node(kind, start, -1, Py_NewRef(Py_None), Py_NewRef(flow ? Py_True : Py_False));
    if (node == NULL || append(b, Py_NewRef(node)) == FAIL)
        goto fail;
    if (b->depth >= b->max_depth) { /* events.py names the limit */
        why = BAIL;
        goto fail;
    }
    if (is_map && (index = PyDict_New()) == NULL)
        goto fail;
    if (b->depth == b->cap) {
        Py_ssize_t cap = b->cap ? b->cap * 2 : 16;
        frame_t *stack = PyMem_Realloc(b->stack, (size_t)cap * sizeof(frame_t));
        if (stack == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        b->stack = stack;
        b->cap = cap;
    }
    b->stack[b->depth++] = (frame_t){node, children, NULL, index, is_map};
    return NONE;
fail:
    Py_XDECREF(node);
    Py_DECREF(children);
    Py_XDECREF(index);
    return why;
}

static void
drop_frame(frame_t *f)
{
    Py_DECREF(f->node);
    Py_DECREF(f->children);
    Py_XDECREF(f->key);
    Py_XDECREF(f->index);
}


static int
close_collection(builder_t *b, Py_ssize_t end)
{
    frame_t f = b->stack[--b->depth];
    if (f.key != NULL) { /* a key with no value: cannot happen with libyaml */
        drop_frame(&f);
        return BAIL;
    }
    ((NodeObject *)f.node)->end = end;
    Py_XSETREF(SLOT(f.node, S_VALUE), f.children);
    if (f.index != NULL)
        Py_XSETREF(SLOT(f.node, S_DICT), f.index);
    Py_DECREF(f.node);
    return NONE;
}

/* The (scalar, seq, map) kind strings of parse/tree.py; ValueError if not. */
static int
kinds_ok(PyObject *kinds)
{
    if (PyTuple_GET_SIZE(kinds) != 3 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(kinds, 0)) ||
        !PyUnicode_CheckExact(PyTuple_GET_ITEM(kinds, 1)) ||
        !PyUnicode_CheckExact(PyTuple_GET_ITEM(kinds, 2))) {
        PyErr_SetString(PyExc_ValueError, "_ctree: kinds is (scalar, seq, map), three str");
        return 0;
    }
    return 1;
}

static int
untagged(yaml_char_t *tag)
{
    return tag == NULL || (tag[0] == '!' && tag[1] == '\0');
}

/* Mapping keys repeat (name, metadata, image...): their str objects are kept in a small
 * table by their UTF-8 text, so a key is decoded and hashed once per process, and a
 * mapping's index (add_pair) finds its hash ready. Short ASCII keys only; a collision
 * replaces the entry. Values are never kept (they may be a Secret's). */
#define KEY_SLOTS 1024
#define KEY_MAX 40
static PyObject *key_table[KEY_SLOTS];

static PyObject *
key_text(const char *text, Py_ssize_t size)
{
    if (size == 0 || size > KEY_MAX)
        return PyUnicode_DecodeUTF8(text, size, "strict");
    uint32_t h = 2166136261u; /* FNV-1a */
    for (Py_ssize_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x80)
            return PyUnicode_DecodeUTF8(text, size, "strict");
        h = (h ^ c) * 16777619u;
    }
    PyObject **slot = &key_table[h & (KEY_SLOTS - 1)];
    PyObject *cached = *slot;
    if (cached != NULL && PyUnicode_GET_LENGTH(cached) == size &&
        memcmp(PyUnicode_1BYTE_DATA(cached), text, (size_t)size) == 0)
        return Py_NewRef(cached);
    PyObject *key = PyUnicode_DecodeUTF8(text, size, "strict");
    if (key == NULL)
        return NULL;
    if (PyObject_Hash(key) == -1) { /* (cannot fail for a str) */
        Py_DECREF(key);
        return NULL;
    }
    Py_XSETREF(*slot, Py_NewRef(key));
    return key;
}

/* Whether a flow mapping was opened without a '{': a single-pair mapping in a flow
 * sequence ([a: b], [? a : b]), which libyaml reads otherwise than the reference parser
 * in some shapes ([[]:], ["a":b]: parse/libyaml.py). An implicit one starts and ends at
 * its key (libyaml's src/parser.c 1015-1018 at 840b65c, in
 * yaml_parser_parse_flow_sequence_entry: the KEY token's marks, the same for a simple
 * key); an explicit one at its '?'. Marks count characters, after a byte-order mark. */
static int
single_pair(builder_t *b, yaml_event_t *ev)
{
    Py_ssize_t at = (Py_ssize_t)ev->start_mark.index + b->bom;
    if (ev->start_mark.index == ev->end_mark.index || at >= PyUnicode_GET_LENGTH(b->text))
        return 1;
    return PyUnicode_READ_CHAR(b->text, at) != '{';
}

static int
on_event(builder_t *b, yaml_event_t *ev, Py_ssize_t base, PyObject *const kinds[3],
         Py_ssize_t max_scalar)
{
    Py_ssize_t start = base + (Py_ssize_t)ev->start_mark.index;
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        if (ev->data.scalar.anchor != NULL || ev->data.scalar.tag != NULL)
            return BAIL;
        const char *text = (const char *)ev->data.scalar.value;
        Py_ssize_t size = (Py_ssize_t)ev->data.scalar.length;
        frame_t *top = b->depth ? &b->stack[b->depth - 1] : NULL;
        PyObject *value = top != NULL && top->is_map && top->key == NULL
                              ? key_text(text, size) /* a mapping key: the same few, again */
                              : PyUnicode_DecodeUTF8(text, size, "strict");
        if (value == NULL)
            return FAIL;
        if (PyUnicode_GET_LENGTH(value) > max_scalar) {
            Py_DECREF(value);
            return BAIL;
        }
        PyObject *node = new_node(kinds[0], start, base + (Py_ssize_t)ev->end_mark.index,
                                  value, scalar_style(ev->data.scalar.style));
        return node == NULL ? FAIL : append(b, node);
    }
    case YAML_SEQUENCE_START_EVENT:
        if (ev->data.sequence_start.anchor != NULL ||
            !untagged(ev->data.sequence_start.tag))
            return BAIL;
        return open_collection(b, kinds[1], start,
                               ev->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE, 0);
    case YAML_MAPPING_START_EVENT:
        if (ev->data.mapping_start.anchor != NULL || !untagged(ev->data.mapping_start.tag))
            return BAIL;
        if (ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE && single_pair(b, ev))
            return BAIL; /* events.py hands it to the reference parser */
        return open_collection(b, kinds[2], start,
                               ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE, 1);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (b->depth == 0)
            return BAIL;
        return close_collection(b, base + (Py_ssize_t)ev->end_mark.index);
    case YAML_ALIAS_EVENT:
        return BAIL;
    default: /* stream and document framing */
        return NONE;
    }
}

/* libyaml's parser over a str's UTF-8, for build and check_edit. ASCII text is its own
 * UTF-8; other text is encoded into a temporary bytes object (*encoded, to release after
 * the parser), as PyYAML does (PyUnicode_AsUTF8AndSize would keep a copy attached to the
 * str, doubling a whole file's text for the rest of the run). No yaml_parser_set_encoding:
 * PyYAML leaves it to libyaml's detection too, which skips a leading byte-order mark
 * without counting it in the offsets. 1 ready (the caller deletes the parser), 0 text that
 * is not UTF-8-encodable (lone surrogates), -1 an exception (a MemoryError is not "not
 * UTF-8": the caller passes it on). */
static int
open_parser(yaml_parser_t *parser, PyObject *text, PyObject **encoded)
{
    Py_ssize_t size = 0;
    const char *utf8 = NULL;
    *encoded = NULL;
    if (PyUnicode_IS_ASCII(text))
        utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    else if ((*encoded = PyUnicode_AsUTF8String(text)) != NULL) {
        utf8 = PyBytes_AS_STRING(*encoded);
        size = PyBytes_GET_SIZE(*encoded);
    }
    else if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
        PyErr_Clear();
        return 0;
    }
    if (utf8 == NULL)
        return -1;
    if (!yaml_parser_initialize(parser)) {
        Py_CLEAR(*encoded);
        PyErr_NoMemory();
        return -1;
    }
    yaml_parser_set_input_string(parser, (const unsigned char *)utf8, (size_t)size);
    return 1;
}

static PyObject *
build(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *text, *kinds_tuple;
    Py_ssize_t base, max_depth, max_scalar;
    PyTypeObject *type;
    if (!PyArg_ParseTuple(args, "UnO!O!nn", &text, &base, &PyType_Type, &type, &PyTuple_Type,
                          &kinds_tuple, &max_depth, &max_scalar))
        return NULL;
    if (!kinds_ok(kinds_tuple))
        return NULL;
    if (read_layout(type) < 0)
        return NULL;
    PyObject *const kinds[3] = {PyTuple_GET_ITEM(kinds_tuple, 0),
                                PyTuple_GET_ITEM(kinds_tuple, 1),
                                PyTuple_GET_ITEM(kinds_tuple, 2)};
    if (!PyUnicode_CheckExact(text)) /* PyYAML's CParser refuses str subclasses */
        Py_RETURN_NONE;
    PyObject *encoded;
    yaml_parser_t parser;
    int ready = open_parser(&parser, text, &encoded);
    if (ready <= 0) /* lone surrogates (0): events.py's path raises, as it always did */
        return ready < 0 ? NULL : Py_NewRef(Py_None);
    Py_ssize_t bom = PyUnicode_GET_LENGTH(text) > 0 && PyUnicode_READ_CHAR(text, 0) == 0xFEFF;
    builder_t b = {NULL, 0, 0, max_depth, PyList_New(0), kinds[0], text, bom};
    unsigned long events = 0;
    int stop = b.roots == NULL ? FAIL : NONE;
    int done = 0;
    while (stop == NONE && !done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            stop = BAIL; /* a syntax error: events.py reports it */
            break;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        if ((++events & 4095) == 0 && PyErr_CheckSignals() < 0) {
            yaml_event_delete(&ev);
            stop = FAIL; /* KeyboardInterrupt, or what a handler raised */
            break;
        }
        stop = on_event(&b, &ev, base, kinds, max_scalar);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    Py_XDECREF(encoded);
    if (stop == NONE && b.depth != 0)
        stop = BAIL;
    while (b.depth > 0)
        drop_frame(&b.stack[--b.depth]);
    PyMem_Free(b.stack);
    if (stop == NONE)
        return b.roots;
    Py_XDECREF(b.roots);
    if (stop == FAIL)
        return NULL;
    Py_RETURN_NONE;
}

/* ---- check_edit: the self-check without a second tree -------------------------------
 *
 * edit/treecheck.py's promise (the edited document, parsed again, is the original tree
 * plus our annotation) checked by walking the edited text's libyaml events against the
 * original tree in step: no Node is made for the edited document. Keys must stay in
 * place, as verify.py wants; our key, and a level the edit created (metadata,
 * annotations), may be anywhere in their mapping; an old value under our key is dropped.
 * Any difference, anchor, alias, tag, parse error or anything else returns 0 ("cannot
 * tell"), and verify.py decides. Internally: 1 the same, 0 cannot tell, -1 a Python
 * exception (a signal handler raised, out of memory). */

typedef struct {
    yaml_parser_t parser;
    yaml_event_t ev;
    int have;           /* ev holds the next event, not yet consumed */
    unsigned long events;
    PyObject *kinds[3];
    PyObject *path;     /* tuple of str: the template path */
    PyObject *key;      /* our annotation key (str) */
    PyObject *value;    /* its planned value (str) */
    int depth;
} checker_t;

enum { R_PLAIN, R_PATH, R_TEMPLATE, R_META, R_ANN };
#define CHECK_MAX_DEPTH 1100

/* The next event (not consumed), or NULL: a parse error (no exception) or a Python
 * exception (a signal handler raised: PyErr_Occurred). */
static yaml_event_t *
peek(checker_t *c)
{
    if (!c->have) {
        if (!yaml_parser_parse(&c->parser, &c->ev))
            return NULL;
        c->have = 1;
        if ((++c->events & 4095) == 0 && PyErr_CheckSignals() < 0)
            return NULL;
    }
    return &c->ev;
}

static void
consume(checker_t *c)
{
    if (c->have) {
        yaml_event_delete(&c->ev);
        c->have = 0;
    }
}

/* -1 when a Python exception is set, else 0: the walk's "cannot tell". */
static int
stop(void)
{
    return PyErr_Occurred() ? -1 : 0;
}

/* The next event, if it is of this type, consumed: 1; else stop(). */
static int
expect(checker_t *c, yaml_event_type_t type)
{
    yaml_event_t *ev = peek(c);
    if (ev == NULL || ev->type != type)
        return stop();
    consume(c);
    return 1;
}

/* Whether a Python str holds exactly these UTF-8 bytes (1 or 0). libyaml's text is
 * always UTF-8, so decoding fails only for want of memory: then 0 with the MemoryError
 * set (the callers' stop() passes it on). */
static int
str_is(PyObject *s, const yaml_char_t *p, size_t n)
{
    if (!PyUnicode_CheckExact(s))
        return 0;
    if (PyUnicode_IS_ASCII(s))
        return (size_t)PyUnicode_GET_LENGTH(s) == n && memcmp(PyUnicode_DATA(s), p, n) == 0;
    PyObject *t = PyUnicode_DecodeUTF8((const char *)p, (Py_ssize_t)n, "strict");
    if (t == NULL)
        return 0;
    int r = PyUnicode_Compare(s, t) == 0;
    Py_DECREF(t);
    return r;
}

static int
kind_is(PyObject *k, PyObject *want)
{
    return k == want || (PyUnicode_Check(k) && PyUnicode_Compare(k, want) == 0);
}

/* A scalar event with no anchor or tag whose value is the str ``s``. */
static int
scalar_is(yaml_event_t *ev, PyObject *s)
{
    if (ev->type != YAML_SCALAR_EVENT || ev->data.scalar.anchor != NULL ||
        ev->data.scalar.tag != NULL)
        return 0;
    return str_is(s, ev->data.scalar.value, ev->data.scalar.length);
}

static int
style_is(PyObject *old, yaml_scalar_style_t style)
{
    PyObject *want = style <= YAML_FOLDED_SCALAR_STYLE ? STYLES[style] : NULL;
    if (want == NULL || want == Py_None) /* not a style, or plain */
        return want == Py_None && old == Py_None;
    return PyUnicode_Check(old) && PyUnicode_Compare(old, want) == 0;
}

/* Whether an old tree node is a scalar whose value is the str ``name``. */
static int
old_names(checker_t *c, PyObject *node, PyObject *name)
{
    if (!IS_NODE(node))
        return 0;
    PyObject *k = SLOT(node, S_KIND), *v = SLOT(node, S_VALUE);
    return k != NULL && v != NULL && kind_is(k, c->kinds[0]) && PyUnicode_CheckExact(v) &&
           PyUnicode_Compare(v, name) == 0;
}

/* Whether an old mapping entry is a (Node, Node) pair. */
static int
is_pair(PyObject *pair)
{
    return PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2 &&
           IS_NODE(PyTuple_GET_ITEM(pair, 0)) && IS_NODE(PyTuple_GET_ITEM(pair, 1));
}

static int check_node(checker_t *c, PyObject *old, int role, Py_ssize_t d);

/* Our value: a double-quoted scalar without tag or anchor. */
static int
check_ours(checker_t *c)
{
    yaml_event_t *ev = peek(c);
    if (ev == NULL || !scalar_is(ev, c->value) ||
        ev->data.scalar.style != YAML_DOUBLE_QUOTED_SCALAR_STYLE)
        return stop();
    consume(c);
    return 1;
}

/* A level the edit created: ``{annotations: {key: "value"}}`` (levels 2) or
 * ``{key: "value"}`` (1), in any style, with nothing else in it. */
static int
check_created(checker_t *c, int levels)
{
    yaml_event_t *ev = peek(c);
    if (ev == NULL || ev->type != YAML_MAPPING_START_EVENT ||
        ev->data.mapping_start.anchor != NULL || !untagged(ev->data.mapping_start.tag))
        return stop();
    consume(c);
    ev = peek(c);
    if (ev == NULL || !scalar_is(ev, levels == 2 ? ANNOTATIONS_KEY : c->key))
        return stop();
    consume(c);
    int r = levels == 2 ? check_created(c, 1) : check_ours(c);
    return r <= 0 ? r : expect(c, YAML_MAPPING_END_EVENT);
}

/* The entries of an old mapping against the new stream's, up to its end event. ``role``
 * says what this mapping is on the way to our annotation (R_PATH: level d of the
 * template path). */
static int
check_pairs(checker_t *c, PyObject *pairs, int role, Py_ssize_t d)
{
    if (!PyList_Check(pairs))
        return 0;
    /* the sizes are read again after each event: peek() runs signal handlers */
#define N_PAIRS PyList_GET_SIZE(pairs)
    Py_ssize_t path_len = PyTuple_GET_SIZE(c->path);
    PyObject *special = NULL; /* the key this mapping leads on by */
    PyObject *created = NULL; /* the key the edit may have added here */
    int next_role = R_PLAIN;
    if (role == R_PATH) {
        special = PyTuple_GET_ITEM(c->path, d);
        next_role = d + 1 < path_len ? R_PATH : R_TEMPLATE;
    }
    else if (role == R_TEMPLATE || role == R_META) {
        special = role == R_TEMPLATE ? METADATA_KEY : ANNOTATIONS_KEY;
        next_role = role == R_TEMPLATE ? R_META : R_ANN;
    }
    else if (role == R_ANN) {
        created = c->key;
    }
    Py_ssize_t found = 0, ours_before = 0;
    for (Py_ssize_t i = 0; i < N_PAIRS; i++) { /* (Node, Node) pairs; the keys this level reads */
        PyObject *pair = PyList_GET_ITEM(pairs, i);
        if (!is_pair(pair))
            return 0;
        PyObject *k = PyTuple_GET_ITEM(pair, 0);
        if (special != NULL && old_names(c, k, special)) {
            PyObject *vk = SLOT(PyTuple_GET_ITEM(pair, 1), S_KIND);
            if (vk == NULL || !kind_is(vk, c->kinds[2]))
                return 0;
            found++;
        }
        if (role == R_ANN && old_names(c, k, c->key))
            ours_before++;
    }
    if (ours_before > 1) /* our key twice: a duplicate key, verify.py names it */
        return 0;
    if (special != NULL) { /* exactly one such key, a mapping; or none (then created) */
        if (found > 1 || (found == 0 && role == R_PATH))
            return 0;
        if (found == 0) {
            created = special;
            special = NULL;
        }
    }
    int made = 0;
    Py_ssize_t i = 0;
    for (;;) {
        while (role == R_ANN && i < N_PAIRS && is_pair(PyList_GET_ITEM(pairs, i)) &&
               old_names(c, PyTuple_GET_ITEM(PyList_GET_ITEM(pairs, i), 0), c->key))
            i++; /* an old value under our key: replaced (a pair checked again: a signal
                  * handler may have changed the list since the first pass) */
        yaml_event_t *ev = peek(c);
        if (ev == NULL)
            return stop();
        if (ev->type == YAML_MAPPING_END_EVENT)
            break;
        int is_created = created != NULL && scalar_is(ev, created);
        if (PyErr_Occurred())
            return -1;
        if (is_created) { /* ours, or a level the edit made */
            if (made++)
                return 0;
            consume(c);
            int r = role == R_ANN ? check_ours(c) : check_created(c, role == R_TEMPLATE ? 2 : 1);
            if (r <= 0)
                return r;
            continue;
        }
        if (i >= N_PAIRS)
            return 0;
        PyObject *pair = PyList_GET_ITEM(pairs, i++);
        if (!is_pair(pair))
            return 0;
        Py_INCREF(pair); /* (held while its nodes are walked) */
        PyObject *k = PyTuple_GET_ITEM(pair, 0);
        int r = check_node(c, k, R_PLAIN, 0);
        int leads = special != NULL && old_names(c, k, special);
        if (r > 0)
            r = check_node(c, PyTuple_GET_ITEM(pair, 1), leads ? next_role : R_PLAIN,
                           leads && next_role == R_PATH ? d + 1 : 0);
        Py_DECREF(pair);
        if (r <= 0)
            return r;
    }
#undef N_PAIRS
    if (i != PyList_GET_SIZE(pairs) || (created != NULL && made != 1))
        return 0;
    consume(c); /* the mapping's end */
    return 1;
}

/* One old node against the new stream's next node (all of its events), with the node
 * and its kind, style and value held: peek() runs signal handlers every 4,096 events,
 * and a handler may change or drop any part of the old tree meanwhile. */
static int check_held(checker_t *c, PyObject *kind, PyObject *style, PyObject *value,
                      int role, Py_ssize_t d);

static int
check_node(checker_t *c, PyObject *old, int role, Py_ssize_t d)
{
    if (!IS_NODE(old)) {
        PyErr_SetString(PyExc_TypeError, "_ctree.check_edit: not a Node");
        return -1;
    }
    if (SLOT(old, S_TAG) != Py_None || SLOT(old, S_ANCHOR) != Py_None)
        return 0;
    PyObject *kind = SLOT(old, S_KIND), *style = SLOT(old, S_STYLE);
    PyObject *value = SLOT(old, S_VALUE);
    if (kind == NULL || style == NULL || value == NULL) /* a Node never filled in */
        return 0;
    Py_INCREF(old);
    Py_INCREF(kind);
    Py_INCREF(style);
    Py_INCREF(value);
    int r = check_held(c, kind, style, value, role, d);
    Py_DECREF(value);
    Py_DECREF(style);
    Py_DECREF(kind);
    Py_DECREF(old);
    return r;
}

static int
check_held(checker_t *c, PyObject *kind, PyObject *style, PyObject *value, int role,
           Py_ssize_t d)
{
    yaml_event_t *ev = peek(c);
    if (ev == NULL)
        return stop();
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        if (role != R_PLAIN || !kind_is(kind, c->kinds[0]) || !style_is(style, ev->data.scalar.style))
            return 0;
        if (!scalar_is(ev, value))
            return stop();
        consume(c);
        return 1;
    }
    case YAML_SEQUENCE_START_EVENT: {
        if (role != R_PLAIN || !kind_is(kind, c->kinds[1]) ||
            ev->data.sequence_start.anchor != NULL || !untagged(ev->data.sequence_start.tag) ||
            style != (ev->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE ? Py_True : Py_False) ||
            !PyList_Check(value))
            return 0;
        consume(c);
        if (++c->depth > CHECK_MAX_DEPTH)
            return 0;
        /* the list is held (check_node); its size is read again after each item, and each
         * item is held while it is walked */
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); i++) {
            PyObject *item = PyList_GET_ITEM(value, i);
            Py_INCREF(item);
            int r = check_node(c, item, R_PLAIN, 0);
            Py_DECREF(item);
            if (r <= 0)
                return r;
        }
        c->depth--;
        return expect(c, YAML_SEQUENCE_END_EVENT);
    }
    case YAML_MAPPING_START_EVENT: {
        if (!kind_is(kind, c->kinds[2]) || ev->data.mapping_start.anchor != NULL ||
            !untagged(ev->data.mapping_start.tag) ||
            style != (ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE ? Py_True : Py_False))
            return 0;
        consume(c);
        if (++c->depth > CHECK_MAX_DEPTH)
            return 0;
        int r = check_pairs(c, value, role, d);
        c->depth--;
        return r;
    }
    default: /* an alias, or the stream's framing where a node should be */
        return 0;
    }
}

static PyObject *
check_edit(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *old, *text, *kinds_tuple, *path, *key, *value;
    PyTypeObject *type;
    if (!PyArg_ParseTuple(args, "OUO!O!O!UU", &old, &text, &PyType_Type, &type, &PyTuple_Type,
                          &kinds_tuple, &PyTuple_Type, &path, &key, &value))
        return NULL;
    if (!kinds_ok(kinds_tuple))
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(path); i++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(path, i)))
            return PyErr_Format(PyExc_TypeError, "_ctree.check_edit: the path holds str");
    if (read_layout(type) < 0)
        return NULL;
    if (!PyUnicode_CheckExact(text) || Py_TYPE(old) != type)
        Py_RETURN_NONE;
    PyObject *encoded;
    checker_t c = {.path = path, .key = key, .value = value};
    int ready = open_parser(&c.parser, text, &encoded);
    if (ready <= 0)
        return ready < 0 ? NULL : Py_NewRef(Py_None);
    for (int i = 0; i < 3; i++)
        c.kinds[i] = PyTuple_GET_ITEM(kinds_tuple, i);
    int r = expect(&c, YAML_STREAM_START_EVENT);
    if (r > 0)
        r = expect(&c, YAML_DOCUMENT_START_EVENT);
    if (r > 0) {
        int role = PyTuple_GET_SIZE(path) ? R_PATH : R_TEMPLATE;
        PyObject *root_kind = SLOT(old, S_KIND);
        r = root_kind != NULL && kind_is(root_kind, c.kinds[2]) ? check_node(&c, old, role, 0)
                                                                : 0;
    }
    if (r > 0)
        r = expect(&c, YAML_DOCUMENT_END_EVENT);
    if (r > 0)
        r = expect(&c, YAML_STREAM_END_EVENT);
    if (r == 0 && PyErr_Occurred())
        r = -1;
    consume(&c);
    yaml_parser_delete(&c.parser);
    Py_XDECREF(encoded);
    return r < 0 ? NULL : Py_NewRef(r > 0 ? Py_True : Py_None);
}

/* ---- what the tree's readers below work with ----------------------------------------
 *
 * bind_get() sets the Node class and the mapping and alias kind strings, bind_scalar()
 * the scalar and sequence ones, once, when tree.py is imported. (tree.get and
 * tree.scalar themselves were in C too: under 1 % of a run, back in Python.) */

static PyObject *get_map_kind, *get_alias_kind;

static PyObject *
bind_get(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyTypeObject *type;
    PyObject *map_kind, *alias_kind;
    if (!PyArg_ParseTuple(args, "O!UU", &PyType_Type, &type, &map_kind, &alias_kind))
        return NULL;
    if (read_layout(type) < 0)
        return NULL;
    Py_XSETREF(get_map_kind, Py_NewRef(map_kind));
    Py_XSETREF(get_alias_kind, Py_NewRef(alias_kind));
    Py_RETURN_NONE;
}

static PyObject *scalar_kind, *seq_kind;

static PyObject *
bind_scalar(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *kind, *seq;
    if (!PyArg_ParseTuple(args, "UU", &kind, &seq))
        return NULL;
    if (get_map_kind == NULL)
        return PyErr_Format(PyExc_RuntimeError, "_ctree.bind_scalar: bind_get() first");
    Py_XSETREF(scalar_kind, Py_NewRef(kind));
    Py_XSETREF(seq_kind, Py_NewRef(seq));
    Py_RETURN_NONE;
}

static int
is_null_text(PyObject *value)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(value);
    if (n == 0)
        return 1;
    if (n > 4 || !PyUnicode_IS_ASCII(value))
        return 0;
    const char *s = (const char *)PyUnicode_1BYTE_DATA(value);
    if (n == 1)
        return s[0] == '~';
    return n == 4 && (!memcmp(s, "null", 4) || !memcmp(s, "Null", 4) || !memcmp(s, "NULL", 4));
}

/* ---- collect: analyze/refs.py's site walk, for find_refs ---------------------------
 *
 * refs._collect in C: the nodes at every path of a trie of reference sites (keys to
 * follow, "*" to fan out over list items, the sites whose path ends here), each with its
 * field path, in document order. Only over trees the C builder made: an alias, or a
 * mapping without its key index (a merge, a duplicate key), returns 0 ("cannot"), and
 * refs.py reads the whole pod spec instead, raising what it raises. Internally: 1 done,
 * 0 cannot, -1 a Python exception. */

typedef struct {
    PyObject *found; /* list of lists, one per site */
    int depth;
} collector_t;

/* A field path one step on: field + "." + step, then "[index]" when index >= 0 (step
 * NULL: field + "[index]"). What the "%U.%U[%zd]" of PyUnicode_FromFormat writes, made
 * with one allocation and no format to parse (a walk makes one per step). */
static PyObject *
field_path(PyObject *field, PyObject *step, Py_ssize_t index)
{
    /* (the "." even after an empty field, as the format does: callers skip it) */
    char digits[32] = "";
    Py_ssize_t nd = index >= 0 ? snprintf(digits, sizeof digits, "[%zd]", index) : 0;
    Py_ssize_t nf = PyUnicode_GET_LENGTH(field), ns = step ? PyUnicode_GET_LENGTH(step) : 0;
    Py_ssize_t dot = step != NULL;
    Py_UCS4 maxchar = PyUnicode_MAX_CHAR_VALUE(field);
    if (step != NULL && PyUnicode_MAX_CHAR_VALUE(step) > maxchar)
        maxchar = PyUnicode_MAX_CHAR_VALUE(step);
    PyObject *out = PyUnicode_New(nf + dot + ns + nd, maxchar);
    if (out == NULL)
        return NULL;
    int kind = PyUnicode_KIND(out);
    void *data = PyUnicode_DATA(out);
    Py_ssize_t at = nf;
    if (PyUnicode_CopyCharacters(out, 0, field, 0, nf) < 0)
        goto fail;
    if (dot)
        PyUnicode_WRITE(kind, data, at++, '.');
    if (ns && PyUnicode_CopyCharacters(out, at, step, 0, ns) < 0)
        goto fail;
    at += ns;
    for (Py_ssize_t i = 0; i < nd; i++)
        PyUnicode_WRITE(kind, data, at++, (Py_UCS4)(unsigned char)digits[i]);
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static int collect_into(collector_t *c, PyObject *node, PyObject *trie, PyObject *field);

/* One named step of the trie from a mapping with its key index ``written``. */
static int
collect_step(collector_t *c, PyObject *written, PyObject *step, PyObject *sub, PyObject *field)
{
    PyObject *pair = PyDict_GetItemWithError(written, step);
    if (pair == NULL)
        return PyErr_Occurred() ? -1 : 1;
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2)
        return 0;
    PyObject *child = PyTuple_GET_ITEM(pair, 1);
    Py_INCREF(child);
    PyObject *f = PyUnicode_GET_LENGTH(field) == 0 ? Py_NewRef(step) : field_path(field, step, -1);
    int r = f == NULL ? -1 : collect_into(c, child, sub, f);
    Py_XDECREF(f);
    Py_DECREF(child);
    return r;
}

static int
collect_into(collector_t *c, PyObject *node, PyObject *trie, PyObject *field)
{
    if (!IS_NODE(node) || !PyTuple_Check(trie) || PyTuple_GET_SIZE(trie) != 2)
        return 0;
    PyObject *children = PyTuple_GET_ITEM(trie, 0), *ends = PyTuple_GET_ITEM(trie, 1);
    if (!PyDict_Check(children) || !PyList_Check(ends))
        return 0;
    /* the kind first: an alias (or an unset slot) is refs._collect's, which records the
     * node it reads through to, never the alias itself */
    PyObject *kind = SLOT(node, S_KIND), *value = SLOT(node, S_VALUE);
    if (kind == NULL || value == NULL)
        return 0;
    int is_map = kind_is(kind, get_map_kind);
    int is_seq = !is_map && kind_is(kind, seq_kind);
    if (!is_map && !is_seq && !kind_is(kind, scalar_kind))
        return 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ends); i++) {
        Py_ssize_t site = PyLong_AsSsize_t(PyList_GET_ITEM(ends, i));
        if (site == -1 && PyErr_Occurred())
            return -1;
        if (site < 0 || site >= PyList_GET_SIZE(c->found))
            return 0;
        PyObject *pair = PyTuple_Pack(2, node, field);
        if (pair == NULL)
            return -1;
        int rc = PyList_Append(PyList_GET_ITEM(c->found, site), pair);
        Py_DECREF(pair);
        if (rc < 0)
            return -1;
    }
    Py_ssize_t n_children = PyDict_GET_SIZE(children);
    if (n_children == 0)
        return 1;
    if (++c->depth > CHECK_MAX_DEPTH)
        return 0;
    PyObject *star = PyDict_GetItemWithError(children, STAR);
    if (star == NULL && PyErr_Occurred())
        return -1;
    if (star != NULL && is_seq) {
        if (!PyList_Check(value))
            return 0;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); i++) {
            PyObject *item = PyList_GET_ITEM(value, i);
            PyObject *f = field_path(field, NULL, i);
            if (f == NULL)
                return -1;
            int r = collect_into(c, item, star, f);
            Py_DECREF(f);
            if (r <= 0)
                return r;
        }
    }
    if (is_map && n_children > (star != NULL)) {
        PyObject *written = SLOT(node, S_DICT);
        if (written == NULL || !PyDict_Check(written))
            return 0; /* a merge or a duplicate key: refs._collect (entries()) decides */
        Py_ssize_t pos = 0;
        PyObject *step, *sub;
        while (PyDict_Next(children, &pos, &step, &sub)) {
            if (!PyUnicode_CheckExact(step))
                return 0;
            if (PyUnicode_Compare(step, STAR) == 0)
                continue;
            /* held: nothing below runs Python code with exact str keys, but be safe */
            Py_INCREF(step);
            Py_INCREF(sub);
            int r = collect_step(c, written, step, sub, field);
            Py_DECREF(step);
            Py_DECREF(sub);
            if (r <= 0)
                return r;
        }
    }
    c->depth--;
    return 1;
}

/* ---------------------------------------------------------------- classify._top_level
 *
 * read/split.py's _top_level over ASCII text (its reference, which this mirrors step
 * by step): the values of column-0 "key:" lines, or None when one is not a simple,
 * optionally quoted value. Text that is not ASCII returns NotImplemented (str.strip()
 * strips Unicode spaces too; Python decides). */

static int
ascii_space(char c)
{
    /* what str.strip() strips among ASCII: Py_UNICODE_ISSPACE */
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

static int
value_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '/' || c == '-';
}

/* the next "\n" + key + ":" at or after from, or -1 */
static Py_ssize_t
find_key_line(const char *s, Py_ssize_t n, const char *k, Py_ssize_t kn, Py_ssize_t from)
{
    while (from < n) {
        const char *nl = memchr(s + from, '\n', (size_t)(n - from));
        if (nl == NULL)
            return -1;
        Py_ssize_t at = nl - s;
        if (n - at - 1 >= kn + 1 && !memcmp(nl + 1, k, (size_t)kn) && nl[1 + kn] == ':')
            return at;
        from = at + 1;
    }
    return -1;
}

static PyObject *
top_level(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *text, *key;
    if (!PyArg_ParseTuple(args, "UU", &text, &key))
        return NULL;
    if (!PyUnicode_IS_ASCII(text) || !PyUnicode_IS_ASCII(key))
        Py_RETURN_NOTIMPLEMENTED;
    const char *s = (const char *)PyUnicode_1BYTE_DATA(text);
    const char *k = (const char *)PyUnicode_1BYTE_DATA(key);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), kn = PyUnicode_GET_LENGTH(key);
    PyObject *found = PyList_New(0);
    if (found == NULL)
        return NULL;
    int at_start = n >= kn + 1 && !memcmp(s, k, (size_t)kn) && s[kn] == ':';
    Py_ssize_t pos = at_start ? 0 : find_key_line(s, n, k, kn, 0);
    while (pos >= 0) {
        Py_ssize_t start = pos + ((pos == 0 && at_start) ? kn + 1 : kn + 2);
        const char *nl = start < n ? memchr(s + start, '\n', (size_t)(n - start)) : NULL;
        Py_ssize_t eol = nl != NULL ? nl - s : -1;
        Py_ssize_t a = start, b = eol < 0 ? n : eol;
        if (a > b)
            a = b;
        /* a comment is cut only when " #" or "\t#" is in the line, at its first "#" */
        for (Py_ssize_t i = a + 1; i < b; i++) {
            if (s[i] == '#' && (s[i - 1] == ' ' || s[i - 1] == '\t')) {
                b = (const char *)memchr(s + a, '#', (size_t)(b - a)) - s;
                break;
            }
        }
        while (a < b && ascii_space(s[a]))
            a++;
        while (b > a && ascii_space(s[b - 1]))
            b--;
        if (b - a >= 2 && s[a] == s[b - 1] && (s[a] == '\'' || s[a] == '"')) {
            a++;
            b--;
        }
        int ok = b > a;
        for (Py_ssize_t i = a; ok && i < b; i++)
            ok = value_char(s[i]);
        if (!ok) {
            Py_DECREF(found);
            Py_RETURN_NONE;
        }
        PyObject *value = PyUnicode_FromStringAndSize(s + a, b - a);
        if (value == NULL || PyList_Append(found, value) < 0) {
            Py_XDECREF(value);
            Py_DECREF(found);
            return NULL;
        }
        Py_DECREF(value);
        pos = find_key_line(s, n, k, kn, start);
    }
    return found;
}

/* ---------------------------------------------------------------- refs._site_refs
 *
 * analyze/refs.py's _site_refs for the common case (its reference, which this mirrors
 * step by step): the Reference of each site node, over mappings with their key index and
 * untagged, unaliased values. Anything else -- an alias, a tag, a value Kubernetes would
 * refuse (refs.py raises the error), a name with a problem for renaming -- and find_refs
 * hands the whole pod spec to refs.py. (The walk and this, as entry points of their own
 * for refs.py's Python path, saved under 2 % of a run: only find_refs calls them.) */

static PyTypeObject *ref_type, *spot_type;
static PyObject *true_words, *false_words;
static PyObject *KEY_KEY;  /* "key", of an items entry */
static PyObject *NAME_KEY; /* "name", of a container */

/* The value node under key of a mapping (borrowed into *out; NULL: absent). 1 ok, 0 not
 * the common case, -1 error. */
static int
value_of(PyObject *node, PyObject *key, PyObject **out)
{
    *out = NULL;
    if (!IS_NODE(node) || SLOT(node, S_KIND) != get_map_kind)
        return 0;
    PyObject *index = SLOT(node, S_DICT);
    if (index == NULL || !PyDict_CheckExact(index))
        return 0;
    PyObject *pair = PyDict_GetItemWithError(index, key);
    if (pair == NULL)
        return PyErr_Occurred() ? -1 : 1;
    if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2)
        return 0;
    PyObject *value = PyTuple_GET_ITEM(pair, 1);
    if (!IS_NODE(value) || SLOT(value, S_KIND) == get_alias_kind ||
        SLOT(value, S_TAG) != Py_None)
        return 0;
    *out = value;
    return 1;
}

/* A plain string field: 1 with *text (borrowed; NULL for absent or null), 0 anything
 * else (a mapping or a sequence is an error refs.py raises). */
static int
text_of(PyObject *value, PyObject **text)
{
    *text = NULL;
    if (value == NULL)
        return 1;
    PyObject *v = SLOT(value, S_VALUE);
    if (SLOT(value, S_KIND) != scalar_kind || v == NULL || !PyUnicode_CheckExact(v))
        return 0;
    if (!(SLOT(value, S_STYLE) == Py_None && is_null_text(v)))
        *text = v;
    return 1;
}

/* A plain string field of a mapping: 1 with *text (borrowed; NULL: absent or null), 0
 * anything else (a mapping or a sequence is an error Python raises). */
static int
str_field_of(PyObject *map, PyObject *key, PyObject **text)
{
    PyObject *value;
    *text = NULL;
    int r = value_of(map, key, &value);
    return r <= 0 ? r : text_of(value, text);
}

/* keys of an items list: the sorted, unique "key" values; NULL with no error for "none
 * listed" (every key), and with *odd set for refs.py's case. */
static PyObject *
item_keys(PyObject *listed, PyObject *key_name, int *odd)
{
    *odd = 0;
    if (listed == NULL)
        return NULL;
    PyObject *kind = SLOT(listed, S_KIND), *list = SLOT(listed, S_VALUE);
    if (kind == scalar_kind || kind == get_map_kind)
        return NULL; /* tree.items() of a scalar (null too) or a mapping: [] */
    if (kind != seq_kind || list == NULL || !PyList_CheckExact(list)) {
        *odd = 1;
        return NULL;
    }
    PyObject *set = PySet_New(NULL);
    if (set == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *item = PyList_GET_ITEM(list, i), *value, *text;
        PyObject *item_kind = IS_NODE(item) ? SLOT(item, S_KIND) : NULL;
        if (item_kind == scalar_kind || item_kind == seq_kind)
            continue; /* tree.get of a scalar or a sequence: None */
        int r = item_kind == get_map_kind ? value_of(item, key_name, &value) : 0;
        if (r < 0)
            break;
        if (r > 0 && value != NULL &&
            (SLOT(value, S_KIND) == get_map_kind || SLOT(value, S_KIND) == seq_kind))
            continue; /* tree.scalar of a mapping or a sequence: None */
        if (r == 0 || !text_of(value, &text)) {
            *odd = 1;
            break;
        }
        if (text != NULL && PySet_Add(set, text) < 0)
            break;
    }
    if (*odd || PyErr_Occurred() || PySet_GET_SIZE(set) == 0) {
        Py_DECREF(set);
        return NULL;
    }
    PyObject *sorted = PySequence_List(set);
    Py_DECREF(set);
    if (sorted == NULL || PyList_Sort(sorted) < 0) {
        Py_XDECREF(sorted);
        return NULL;
    }
    PyObject *keys = PyList_AsTuple(sorted);
    Py_DECREF(sorted);
    return keys;
}

/* bool_field: 1 with *flag, 0 anything Kubernetes would refuse (refs.py raises). */
static int
flag_of(PyObject *value, int *flag)
{
    *flag = 0;
    if (value == NULL)
        return 1;
    PyObject *v = SLOT(value, S_VALUE);
    if (SLOT(value, S_KIND) != scalar_kind || v == NULL || !PyUnicode_CheckExact(v) ||
        SLOT(value, S_STYLE) != Py_None)
        return 0;
    if (is_null_text(v))
        return 1;
    int t = PySet_Contains(true_words, v);
    if (t < 0)
        return -1;
    if (t) {
        *flag = 1;
        return 1;
    }
    int f = PySet_Contains(false_words, v);
    return f < 0 ? -1 : f;
}

static PyObject *
new_tuple(PyTypeObject *type, PyObject *const *items, Py_ssize_t n)
{
    PyObject *t = type->tp_alloc(type, n);
    if (t == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(t, i, Py_NewRef(items[i]));
    return t;
}

static PyObject *
intern(PyObject *s)
{
    Py_INCREF(s);
    PyUnicode_InternInPlace(&s);
    return s;
}

/* One site node's Reference, appended to refs (nothing when it names nothing): 1 done, 0
 * refs.py's, -1 an error. node and field: a pair collect found for site_tuple. */
static int
site_ref(PyObject *refs, PyObject *node, PyObject *field, PyObject *container,
         PyObject *site_tuple)
{
    /* refs.Site: path, then (site[0..5]) target, how, name_field, key_field, items_field,
     * optional_field */
    if (!PyTuple_Check(site_tuple) || PyTuple_GET_SIZE(site_tuple) != 7)
        return 0;
    PyObject *const *site = &PyTuple_GET_ITEM(site_tuple, 1);
    for (int i = 0; i < 6; i++)
        if (!PyUnicode_CheckExact(site[i]) && !(i >= 3 && site[i] == Py_None))
            return 0;
    PyObject *kind = IS_NODE(node) ? SLOT(node, S_KIND) : NULL;
    if (kind == scalar_kind || kind == seq_kind || kind == get_alias_kind)
        return 1; /* refs.py reads a name from mappings only */
    if (kind != get_map_kind)
        return 0;
    PyObject *raw, *name, *value, *keys = NULL;
    int r = value_of(node, site[2], &raw);
    if (r <= 0)
        return r;
    if (!text_of(raw, &name))
        return 0;
    if (name == NULL || PyUnicode_GET_LENGTH(name) == 0)
        return 1;
    PyObject *style = SLOT(raw, S_STYLE);
    if (style == NULL) /* deleted by Python code (``del node.style``): refs.py says so */
        return 0;
    if (style != Py_None && (!PyUnicode_Check(style) ||
                             PyUnicode_CompareWithASCIIString(style, "|") == 0 ||
                             PyUnicode_CompareWithASCIIString(style, ">") == 0))
        return 0; /* a block name: a spot with a problem */
    if (SLOT(raw, S_ANCHOR) != Py_None)
        return 0; /* a spot with a problem */
    if (site[3] != Py_None) { /* one named key */
        PyObject *key;
        if ((r = str_field_of(node, site[3], &key)) <= 0)
            return r;
        keys = key != NULL ? PyTuple_Pack(1, key) : PyTuple_New(0);
        if (keys == NULL)
            return -1;
    }
    else if (site[4] != Py_None) { /* a list of {key: ...} */
        int odd;
        if ((r = value_of(node, site[4], &value)) <= 0)
            return r;
        keys = item_keys(value, KEY_KEY, &odd);
        if (keys == NULL && PyErr_Occurred())
            return -1;
        if (odd)
            return 0;
        if (keys == NULL)
            keys = Py_NewRef(Py_None);
    }
    else
        keys = Py_NewRef(Py_None);
    int optional = 0;
    if (site[5] != Py_None) {
        if ((r = value_of(node, site[5], &value)) > 0)
            r = flag_of(value, &optional);
        if (r <= 0) {
            Py_DECREF(keys);
            return r;
        }
    }
    PyObject *at[3] = {PyLong_FromSsize_t(((NodeObject *)raw)->start),
                       PyLong_FromSsize_t(((NodeObject *)raw)->end),
                       PyLong_FromSsize_t(((NodeObject *)node)->start)};
    PyObject *f = intern(field), *spot = NULL, *ref = NULL;
    PyObject *c = container != Py_None && PyUnicode_GET_LENGTH(container) ? intern(container)
                                                                         : Py_NewRef(container);
    if (at[0] != NULL && at[1] != NULL && at[2] != NULL) {
        PyObject *spot_items[4] = {at[0], at[1], style, Py_None};
        spot = new_tuple(spot_type, spot_items, 4);
    }
    if (spot != NULL) {
        PyObject *items[12] = {
            site[0], name,    keys,    optional ? Py_True : Py_False,
            site[1], f,       at[2],   c,
            Py_None, Py_False, Py_None, spot,
        };
        ref = new_tuple(ref_type, items, 12);
    }
    r = ref != NULL && PyList_Append(refs, ref) == 0 ? 1 : -1;
    for (int i = 0; i < 3; i++)
        Py_XDECREF(at[i]);
    Py_XDECREF(spot);
    Py_XDECREF(ref);
    Py_DECREF(f);
    Py_DECREF(c);
    Py_DECREF(keys);
    return r;
}

/* ---------------------------------------------------------------- marker lines
 *
 * read/split.py's marker lines (its _py_markers is the reference), for cuts() below:
 * where each line that starts with "---" or "..." (then a blank, a line break or the end
 * of the text) or with "%" begins, in order. Any kind of str. (The scan alone, as
 * split._markers, saved under 1 % of a run: it is Python's again.) */

typedef struct {
    PyObject *text;
    int kind;
    const void *data;
    Py_ssize_t n;
    Py_ssize_t line; /* the start of the next line to look at */
} marker_scan;

/* The next marker line's start and its first character ('-', '.' or '%'); -1 at the end
 * of the text, -2 on an error (set). */
static Py_ssize_t
next_marker(marker_scan *s, Py_UCS4 *token)
{
    int kind = s->kind;
    const void *data = s->data;
    Py_ssize_t n = s->n;
#define CH(i) PyUnicode_READ(kind, data, (i))
    while (s->line < n) {
        Py_ssize_t line = s->line;
        Py_UCS4 c = CH(line);
        int marker = c == '%';
        if (!marker && (c == '-' || c == '.') && line + 3 <= n && CH(line + 1) == c &&
            CH(line + 2) == c) {
            Py_UCS4 after = line + 3 < n ? CH(line + 3) : '\n';
            marker = after == ' ' || after == '\t' || after == '\r' || after == '\n';
        }
        /* the next line */
        Py_ssize_t nl = PyUnicode_FindChar(s->text, '\n', line, n, 1);
        if (nl == -2)
            return -2;
        s->line = nl < 0 ? n : nl + 1;
        if (marker) {
            *token = c;
            return line;
        }
    }
#undef CH
    return -1;
}

/* ---------------------------------------------------------------- split._cuts
 *
 * read/split.py's cuts (its _py_cuts is the reference): where the text's documents
 * start, then its length, strictly increasing. The rare '%' line that may be a directive
 * asks only_comments (split.only_comments) about the text before it. */

static int
add_cut(PyObject *cuts, Py_ssize_t at)
{
    Py_ssize_t len = PyList_GET_SIZE(cuts);
    if (len > 0 && PyLong_AsSsize_t(PyList_GET_ITEM(cuts, len - 1)) == at)
        return 0; /* (cuts never go back: only an equal one is left out) */
    PyObject *o = PyLong_FromSsize_t(at);
    int rc = o == NULL ? -1 : PyList_Append(cuts, o);
    Py_XDECREF(o);
    return rc;
}

static PyObject *
cuts(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *text, *only_comments;
    if (!PyArg_ParseTuple(args, "UO:cuts", &text, &only_comments))
        return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL || add_cut(out, 0) < 0)
        goto fail;
    marker_scan scan = {text, PyUnicode_KIND(text), PyUnicode_DATA(text),
                        PyUnicode_GET_LENGTH(text), 0};
    Py_ssize_t prefix_from = 0; /* where a document prefix (directives allowed) began; -1: none */
    int directive_open = 0;
    Py_UCS4 token;
    Py_ssize_t at;
    while ((at = next_marker(&scan, &token)) >= 0) {
        if (token == '%') {
            if (directive_open)
                continue; /* another directive of the same document (%TAG after %YAML) */
            int comments = 0;
            if (prefix_from >= 0) {
                PyObject *before = PyUnicode_Substring(text, prefix_from, at);
                PyObject *r = before ? PyObject_CallOneArg(only_comments, before) : NULL;
                Py_XDECREF(before);
                if (r == NULL)
                    goto fail;
                comments = PyObject_IsTrue(r);
                Py_DECREF(r);
                if (comments < 0)
                    goto fail;
            }
            if (comments) {
                if (add_cut(out, at) < 0)
                    goto fail;
                directive_open = 1;
            } else {
                prefix_from = -1; /* content came first: this '%' is text, and so are later */
            }
        } else if (token == '-') {
            if (!directive_open && add_cut(out, at) < 0)
                goto fail;
            directive_open = 0;
            prefix_from = -1;
        } else { /* "..." ends the document: the cut goes after its line */
            Py_ssize_t end = scan.line; /* the next line's start, or the end of the text */
            if (add_cut(out, end) < 0)
                goto fail;
            prefix_from = end;
            directive_open = 0;
        }
    }
    if (at == -2 || add_cut(out, scan.n) < 0)
        goto fail;
    return out;
fail:
    Py_XDECREF(out);
    return NULL;
}

/* ---------------------------------------------------------------- refs.find_references
 *
 * analyze/refs.py's find_references over a tree the C builder made (its Python body is
 * the reference): the containers of both lists, each container's sites, the pod's sites,
 * and imagePullSecrets when asked, with the walk (collect) and the References
 * (site_ref) above. Anything either of them hands back -- or an aliased list or
 * container -- makes the whole pod spec refs.py's: None. bind_find() sets the Reference
 * and Spot classes, go-yaml's boolean words and the tables once (after bind_scalar). */

static PyObject *find_tables; /* (lists, container sites, trie, pod sites, trie, (pull site,), trie) */

static PyObject *
bind_find(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyTypeObject *ref, *spot;
    PyObject *t, *f, *tables;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!", &PyType_Type, &ref, &PyType_Type, &spot,
                          &PyFrozenSet_Type, &t, &PyFrozenSet_Type, &f, &PyTuple_Type, &tables))
        return NULL;
    if (scalar_kind == NULL)
        return PyErr_Format(PyExc_RuntimeError, "_ctree.bind_find: bind_scalar() first");
    if (!PyType_IsSubtype(ref, &PyTuple_Type) || !PyType_IsSubtype(spot, &PyTuple_Type))
        return PyErr_Format(PyExc_TypeError, "_ctree.bind_find: tuple classes expected");
    if (PyTuple_GET_SIZE(tables) != 7 || !PyTuple_Check(PyTuple_GET_ITEM(tables, 0)) ||
        !PyTuple_Check(PyTuple_GET_ITEM(tables, 1)) ||
        !PyTuple_Check(PyTuple_GET_ITEM(tables, 3)) ||
        !PyTuple_Check(PyTuple_GET_ITEM(tables, 5)))
        return PyErr_Format(PyExc_TypeError, "_ctree.bind_find: the tables of refs.py");
    Py_XSETREF(ref_type, (PyTypeObject *)Py_NewRef(ref));
    Py_XSETREF(spot_type, (PyTypeObject *)Py_NewRef(spot));
    Py_XSETREF(true_words, Py_NewRef(t));
    Py_XSETREF(false_words, Py_NewRef(f));
    Py_XSETREF(find_tables, Py_NewRef(tables));
    Py_RETURN_NONE;
}

/* The References of one trie of sites from node into refs: 1 done, 0 cannot, -1 error. */
static int
find_sites(PyObject *refs, PyObject *node, PyObject *sites, PyObject *trie, PyObject *field,
           PyObject *container)
{
    Py_ssize_t count = PyTuple_GET_SIZE(sites);
    collector_t c = {PyList_New(count), 0};
    for (Py_ssize_t i = 0; c.found != NULL && i < count; i++) {
        PyObject *list = PyList_New(0);
        if (list == NULL)
            Py_CLEAR(c.found);
        else
            PyList_SET_ITEM(c.found, i, list);
    }
    int r = c.found == NULL ? -1 : collect_into(&c, node, trie, field);
    for (Py_ssize_t i = 0; r > 0 && i < count; i++) {
        /* the (node, field) pairs of site i (none in most pods for most sites) */
        PyObject *found = PyList_GET_ITEM(c.found, i);
        for (Py_ssize_t j = 0; r > 0 && j < PyList_GET_SIZE(found); j++) {
            PyObject *pair = PyList_GET_ITEM(found, j);
            r = site_ref(refs, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1), container,
                         PyTuple_GET_ITEM(sites, i));
        }
    }
    Py_XDECREF(c.found);
    return r;
}

/* One container list: 1 done (absent or not a list too), 0 cannot, -1 error. */
static int
find_containers(PyObject *refs, PyObject *pod_spec, PyObject *list_name, PyObject *field)
{
    PyObject *tables = find_tables, *list;
    int r = value_of(pod_spec, list_name, &list);
    if (r <= 0 || list == NULL)
        return r < 0 ? -1 : (r == 0 ? 0 : 1);
    PyObject *kind = SLOT(list, S_KIND);
    if (kind == scalar_kind || kind == get_map_kind)
        return 1; /* tree.items() of anything but a sequence: [] */
    PyObject *items = SLOT(list, S_VALUE);
    if (kind != seq_kind || items == NULL || !PyList_CheckExact(items))
        return 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *container = PyList_GET_ITEM(items, i), *cname = NULL;
        if (!IS_NODE(container))
            return 0;
        PyObject *ckind = SLOT(container, S_KIND);
        if (ckind == get_map_kind) { /* its name: tree.scalar(tree.get(container, "name")) */
            PyObject *value;
            if ((r = value_of(container, NAME_KEY, &value)) <= 0)
                return r;
            if (value != NULL && SLOT(value, S_KIND) == scalar_kind && !text_of(value, &cname))
                return 0;
        }
        else if (ckind != scalar_kind && ckind != seq_kind)
            return 0; /* an alias: refs.py reads through it */
        PyObject *cfield = field_path(field, list_name, i);
        if (cfield == NULL)
            return -1;
        Py_INCREF(container);
        r = find_sites(refs, container, PyTuple_GET_ITEM(tables, 1), PyTuple_GET_ITEM(tables, 2),
                       cfield, cname != NULL ? cname : Py_None);
        Py_DECREF(container);
        Py_DECREF(cfield);
        if (r <= 0)
            return r;
    }
    return 1;
}

static PyObject *
find_refs(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyUnicode_CheckExact(args[1]))
        return PyErr_Format(PyExc_TypeError, "find_refs(pod_spec, field: str, pull: bool)");
    if (find_tables == NULL)
        return PyErr_Format(PyExc_RuntimeError, "_ctree.find_refs: bind_find() first");
    PyObject *pod_spec = args[0], *field = args[1], *tables = find_tables;
    if (!IS_NODE(pod_spec) || SLOT(pod_spec, S_KIND) != get_map_kind)
        Py_RETURN_NONE;
    int pull = PyObject_IsTrue(args[2]);
    if (pull < 0)
        return NULL;
    Py_INCREF(tables);
    PyObject *refs = PyList_New(0);
    int r = refs == NULL ? -1 : 1;
    PyObject *lists = PyTuple_GET_ITEM(tables, 0);
    for (Py_ssize_t i = 0; r > 0 && i < PyTuple_GET_SIZE(lists); i++) {
        PyObject *list_name = PyTuple_GET_ITEM(lists, i);
        r = PyUnicode_CheckExact(list_name) ? find_containers(refs, pod_spec, list_name, field) : 0;
    }
    if (r > 0)
        r = find_sites(refs, pod_spec, PyTuple_GET_ITEM(tables, 3), PyTuple_GET_ITEM(tables, 4),
                       field, Py_None);
    if (r > 0 && pull) {
        r = find_sites(refs, pod_spec, PyTuple_GET_ITEM(tables, 5), PyTuple_GET_ITEM(tables, 6),
                       field, Py_None);
    }
    Py_DECREF(tables);
    if (r > 0)
        return refs;
    Py_XDECREF(refs);
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------- resources.document_resources
 *
 * parse/resources.py's document_resources for the common case (resources_of, its
 * reference, step by step): each root a mapping with its key index, whose kind,
 * apiVersion and metadata name, namespace and generateName are plain strings (or
 * absent), and whose kind is not a list kind. Anything else -- a List, a missing kind, a
 * value Kubernetes refuses, an alias -- returns NotImplemented for the whole document,
 * and resources.py reads it. bind_resources() sets the Resource class once (after
 * bind_get). */

static PyTypeObject *resource_type;
static PyObject *KIND_KEY, *API_KEY, *NAMESPACE_KEY, *GENERATE_KEY, *LIST_SUFFIX;

static PyObject *
bind_resources(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyTypeObject *type;
    if (!PyArg_ParseTuple(args, "O!", &PyType_Type, &type))
        return NULL;
    if (!PyType_IsSubtype(type, &PyTuple_Type) || get_map_kind == NULL)
        return PyErr_Format(PyExc_TypeError,
                            "_ctree.bind_resources: a tuple class, after bind_get");
    Py_XSETREF(resource_type, (PyTypeObject *)Py_NewRef(type));
    Py_RETURN_NONE;
}

/* One root's Resource (new), or Py_NotImplemented (new), or NULL on error. */
static PyObject *
resource_of(PyObject *source, PyObject *doc, PyObject *root)
{
    PyObject *kind = NULL, *api = NULL, *meta = NULL, *name = NULL, *ns = NULL, *gen = NULL;
    if (!IS_NODE(root) || SLOT(root, S_KIND) != get_map_kind)
        Py_RETURN_NOTIMPLEMENTED;
    int r = str_field_of(root, KIND_KEY, &kind);
    if (r > 0 && kind != NULL)
        r = str_field_of(root, API_KEY, &api);
    if (r > 0 && kind != NULL && (r = value_of(root, METADATA_KEY, &meta)) > 0 && meta != NULL &&
        SLOT(meta, S_KIND) != get_map_kind)
        r = 0; /* null metadata, or not a mapping: resources.py */
    if (r > 0 && meta != NULL && (r = str_field_of(meta, NAME_KEY, &name)) > 0 &&
        (r = str_field_of(meta, NAMESPACE_KEY, &ns)) > 0 &&
        (name == NULL || PyUnicode_GET_LENGTH(name) == 0)) {
        r = str_field_of(meta, GENERATE_KEY, &gen);
        if (gen != NULL && PyUnicode_GET_LENGTH(gen) == 0)
            gen = NULL; /* (generateName or None) */
    }
    if (r < 0)
        return NULL;
    if (r == 0 || kind == NULL || PyUnicode_Tailmatch(kind, LIST_SUFFIX, 0, PY_SSIZE_T_MAX, 1))
        Py_RETURN_NOTIMPLEMENTED; /* no kind (an error), or maybe a List: resources.py */
    PyObject *items[8] = {
        source,
        root,
        intern(api != NULL ? api : EMPTY),
        intern(kind),
        name != NULL ? name : Py_None,
        ns != NULL && PyUnicode_GET_LENGTH(ns) ? intern(ns) : Py_NewRef(ns != NULL ? ns : Py_None),
        doc,
        gen != NULL ? gen : Py_None,
    };
    PyObject *res = new_tuple(resource_type, items, 8);
    Py_DECREF(items[2]);
    Py_DECREF(items[3]);
    Py_DECREF(items[5]);
    return res;
}

static PyObject *
document_resources(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *source, *doc, *roots;
    if (!PyArg_ParseTuple(args, "OO!O!", &source, &PyLong_Type, &doc, &PyList_Type, &roots))
        return NULL;
    if (resource_type == NULL)
        return PyErr_Format(PyExc_RuntimeError,
                            "_ctree.document_resources: bind_resources() first");
    PyObject *out = PyList_New(0);
    for (Py_ssize_t i = 0; out != NULL && i < PyList_GET_SIZE(roots); i++) {
        PyObject *res = resource_of(source, doc, PyList_GET_ITEM(roots, i));
        if (res == NULL || res == Py_NotImplemented) {
            Py_DECREF(out);
            return res;
        }
        int rc = PyList_Append(out, res);
        Py_DECREF(res);
        if (rc < 0)
            Py_CLEAR(out);
    }
    return out;
}


/* ---- resolve_plain: plan/resolve.py's resolve_workload, for plain references --------
 *
 * A workload's references, each to an object of the input that counts whole or with all
 * the keys it names: (resolved, uses) as _resolve would make them, or None for
 * anything else -- a Reloader pattern, an object not in the input or excluded, an
 * imagePullSecret not hashed, an object produced by a source, a named key the object
 * lacks, any unexpected type -- and _resolve does the whole workload in Python (the
 * reference: tests compare the two). The caller has checked the settings and the
 * workload's selection (no --exclude-secrets, no sources or match-only selection, no
 * versioned names). */

static PyTypeObject *rid_type, *resolved_type, *use_type;
static PyObject *no_keys, *image_pull_how;

static PyObject *
bind_resolve(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyTypeObject *rid, *resolved, *use;
    PyObject *empty, *how;
    if (!PyArg_ParseTuple(args, "O!O!O!O!U", &PyType_Type, &rid, &PyType_Type, &resolved,
                          &PyType_Type, &use, &PyFrozenSet_Type, &empty, &how))
        return NULL;
    if (ref_type == NULL)
        return PyErr_Format(PyExc_RuntimeError, "_ctree.bind_resolve: bind_find() first");
    if (!PyType_IsSubtype(rid, &PyTuple_Type) || !PyType_IsSubtype(resolved, &PyTuple_Type) ||
        !PyType_IsSubtype(use, &PyTuple_Type))
        return PyErr_Format(PyExc_TypeError, "_ctree.bind_resolve: tuple classes expected");
    Py_XSETREF(rid_type, (PyTypeObject *)Py_NewRef(rid));
    Py_XSETREF(resolved_type, (PyTypeObject *)Py_NewRef(resolved));
    Py_XSETREF(use_type, (PyTypeObject *)Py_NewRef(use));
    Py_XSETREF(no_keys, Py_NewRef(empty));
    Py_XSETREF(image_pull_how, Py_NewRef(how));
    Py_RETURN_NONE;
}

/* 1 made (appended to resolved and uses), 0 not plain (None), -1 an exception */
static int
resolve_one(PyObject *ref, PyObject *namespace, PyObject *objects, int image_pull,
            PyObject *resolved, PyObject *uses)
{
    if (Py_TYPE(ref) != ref_type || PyTuple_GET_SIZE(ref) != 12)
        return 0;
    PyObject *kind = PyTuple_GET_ITEM(ref, 0), *name = PyTuple_GET_ITEM(ref, 1);
    PyObject *keys = PyTuple_GET_ITEM(ref, 2), *how = PyTuple_GET_ITEM(ref, 4);
    PyObject *ref_ns = PyTuple_GET_ITEM(ref, 8), *pattern = PyTuple_GET_ITEM(ref, 9);
    if (pattern != Py_False || !PyUnicode_CheckExact(kind) || !PyUnicode_CheckExact(name) ||
        !PyUnicode_CheckExact(how) || (keys != Py_None && !PyTuple_CheckExact(keys)) ||
        (ref_ns != Py_None && !PyUnicode_CheckExact(ref_ns)))
        return 0;
    if (!image_pull && PyUnicode_Compare(how, image_pull_how) == 0)
        return 0; /* not hashed: _resolve records why */
    /* the target: ResourceId("", kind, ref.namespace or the workload's, name) */
    PyObject *ns = ref_ns != Py_None && PyUnicode_GET_LENGTH(ref_ns) ? ref_ns : namespace;
    PyObject *parts[4] = {EMPTY, kind, ns, name};
    PyObject *key = new_tuple(rid_type, parts, 4);
    if (key == NULL)
        return -1;
    PyObject *entry = PyDict_GetItemWithError(objects, key); /* borrowed */
    Py_DECREF(key);
    if (entry == NULL)
        return PyErr_Occurred() ? -1 : 0; /* not in the input */
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 4 ||
        PyTuple_GET_ITEM(entry, 3) != Py_None)
        return 0; /* excluded */
    PyObject *info = PyTuple_GET_ITEM(entry, 1);
    if (!PyTuple_Check(info) || PyTuple_GET_SIZE(info) < 4)
        return 0;
    PyObject *content = PyTuple_GET_ITEM(info, 3);
    if (!PyTuple_Check(content) || PyTuple_GET_SIZE(content) != 5 ||
        !PyDict_CheckExact(PyTuple_GET_ITEM(content, 2)) || PyTuple_GET_ITEM(content, 4) != Py_None)
        return 0; /* produced by a source, or not what analyze makes */
    PyObject *entries = PyTuple_GET_ITEM(content, 2);
    for (Py_ssize_t i = 0; keys != Py_None && i < PyTuple_GET_SIZE(keys); i++) {
        PyObject *k = PyTuple_GET_ITEM(keys, i);
        if (!PyUnicode_CheckExact(k))
            return 0;
        int has = PyDict_Contains(entries, k);
        if (has <= 0)
            return has; /* a named key the object lacks: _resolve reports it */
    }
    /* Resolved(ref, entry, no missing keys, not excluded); Use(kind, name, content, keys,
     * the namespace when it is another one) */
    int other = ref_ns != Py_None && PyUnicode_Compare(ref_ns, namespace) != 0; /* exact strs */
    PyObject *keyset = keys != Py_None ? PyFrozenSet_New(keys) : Py_NewRef(Py_None);
    PyObject *missing = NULL, *r = NULL, *u = NULL;
    if (keyset != NULL)
        missing = keys != Py_None && PyTuple_GET_SIZE(keys) ? PyFrozenSet_New(NULL)
                                                            : Py_NewRef(no_keys);
    if (missing != NULL) {
        PyObject *r_items[4] = {ref, entry, missing, Py_None};
        PyObject *u_items[5] = {kind, name, content, keyset, other ? ref_ns : Py_None};
        r = new_tuple(resolved_type, r_items, 4);
        u = r != NULL ? new_tuple(use_type, u_items, 5) : NULL;
    }
    int ok = u != NULL && PyList_Append(resolved, r) == 0 && PyList_Append(uses, u) == 0;
    Py_XDECREF(keyset);
    Py_XDECREF(missing);
    Py_XDECREF(r);
    Py_XDECREF(u);
    return ok ? 1 : -1;
}

static PyObject *
resolve_plain(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyTuple_Check(args[0]) || !PyUnicode_CheckExact(args[1]) ||
        !PyDict_Check(args[2]))
        return PyErr_Format(PyExc_TypeError,
                            "resolve_plain(refs: tuple, namespace: str, objects: dict, "
                            "image_pull_secrets: bool)");
    if (rid_type == NULL)
        return PyErr_Format(PyExc_RuntimeError, "_ctree.resolve_plain: bind_resolve() first");
    int image_pull = PyObject_IsTrue(args[3]);
    if (image_pull < 0)
        return NULL;
    PyObject *resolved = PyList_New(0), *uses = PyList_New(0);
    int r = resolved != NULL && uses != NULL ? 1 : -1;
    for (Py_ssize_t i = 0; r > 0 && i < PyTuple_GET_SIZE(args[0]); i++)
        r = resolve_one(PyTuple_GET_ITEM(args[0], i), args[1], args[2], image_pull, resolved,
                        uses);
    if (r > 0)
        return Py_BuildValue("(NN)", resolved, uses);
    Py_XDECREF(resolved);
    Py_XDECREF(uses);
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"build", build, METH_VARARGS,
     "build(text, base, node_type, kinds, max_depth, max_scalar) -> list | None"},
    {"bind_get", bind_get, METH_VARARGS,
     "bind_get(node_type, map_kind, alias_kind): the Node class and kinds the readers use"},
    {"bind_scalar", bind_scalar, METH_VARARGS,
     "bind_scalar(scalar_kind, seq_kind): the other kinds (after bind_get)"},
    {"bind_find", bind_find, METH_VARARGS,
     "bind_find(reference_type, spot_type, true_words, false_words, tables): refs.py's "
     "classes, words, container lists, sites and tries (after bind_scalar)"},
    {"find_refs", (PyCFunction)(void (*)(void))find_refs, METH_FASTCALL,
     "find_refs(pod_spec, field, image_pull_secrets) -> list[Reference] | None: "
     "refs.find_references over a C-built tree (None: refs.py reads it)"},
    {"bind_resources", bind_resources, METH_VARARGS,
     "bind_resources(resource_type): what document_resources() makes (after bind_get)"},
    {"document_resources", document_resources, METH_VARARGS,
     "document_resources(source, doc, roots) -> list[Resource] | NotImplemented: "
     "resources.document_resources for the common case"},
    {"cuts", cuts, METH_VARARGS,
     "cuts(text, only_comments) -> list[int]: split._cuts, where each document starts, "
     "then the text's length"},
    {"top_level", top_level, METH_VARARGS,
     "top_level(text, key) -> list[str] | None | NotImplemented: classify._top_level over "
     "ASCII text"},
    {"bind_resolve", bind_resolve, METH_VARARGS,
     "bind_resolve(resource_id, resolved, use, no_keys, image_pull_how): what "
     "resolve_plain() makes (after bind_find)"},
    {"resolve_plain", (PyCFunction)(void (*)(void))resolve_plain, METH_FASTCALL,
     "resolve_plain(refs, namespace, objects, image_pull_secrets) -> (resolved, uses) | None: "
     "resolve._resolve for a workload whose references are all plain"},
    {"check_edit", check_edit, METH_VARARGS,
     "check_edit(old_root, new_text, node_type, kinds, template_path, key, value) -> True | "
     "None: the edited text is the old tree plus our annotation (None: cannot tell)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ctree",
    "The position tree of parse/events.py, built in C from libyaml.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__ctree(void)
{
    static const struct {
        PyObject **var;
        const char *text;
    } strings[] = { /* the str constants above, interned */
        {&STYLES[YAML_SINGLE_QUOTED_SCALAR_STYLE], "'"}, {&STYLES[YAML_LITERAL_SCALAR_STYLE], "|"},
        {&STYLES[YAML_DOUBLE_QUOTED_SCALAR_STYLE], "\""}, {&STYLES[YAML_FOLDED_SCALAR_STYLE], ">"},
        {&MERGE_KEY, "<<"}, {&STAR, "*"}, {&METADATA_KEY, "metadata"}, {&KEY_KEY, "key"},
        {&ANNOTATIONS_KEY, "annotations"}, {&NAME_KEY, "name"}, {&KIND_KEY, "kind"},
        {&API_KEY, "apiVersion"}, {&NAMESPACE_KEY, "namespace"}, {&LIST_SUFFIX, "List"},
        {&GENERATE_KEY, "generateName"}, {&NULL_TAG, "tag:yaml.org,2002:null"},
        {&SCALAR_KIND, "scalar"}, {&EMPTY, ""},
    };
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        if ((*strings[i].var = PyUnicode_InternFromString(strings[i].text)) == NULL)
            return NULL;
    STYLES[YAML_PLAIN_SCALAR_STYLE] = Py_None;
    for (int i = 0; i < N_OBJECT_SLOTS; i++)
        node_members[i] = (PyMemberDef){(char *)SLOT_NAMES[i], MEMBER_OBJECT_EX,
                                        offsetof(NodeObject, slots) +
                                            (Py_ssize_t)(i * sizeof(PyObject *)),
                                        0, NULL};
    node_members[S_START] = (PyMemberDef){"start", MEMBER_SSIZE, offsetof(NodeObject, start), 0,
                                          NULL};
    node_members[S_END] = (PyMemberDef){"end", MEMBER_SSIZE, offsetof(NodeObject, end), 0, NULL};
    PyObject *nulls = Py_BuildValue("(sssss)", "", "~", "null", "Null", "NULL");
    NULL_WORDS = nulls ? PyFrozenSet_New(nulls) : NULL;
    Py_XDECREF(nulls);
    if (NULL_WORDS == NULL || PyType_Ready(&NodeType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    const char *version = yaml_get_version_string();
    if (m != NULL && (PyModule_AddObjectRef(m, "Node", (PyObject *)&NodeType) < 0 ||
                      PyModule_AddStringConstant(m, "LIBYAML_VERSION", version) < 0))
        Py_CLEAR(m);
    return m;
}
