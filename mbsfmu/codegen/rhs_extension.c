/* ---- CPython entry point of mbs_rhs (mbsfmu.codegen.c_rhs; hand-written, appended to the
 * generated model source, mbs_linalg and mbs_rhs; @MODULE@ is replaced by the module name).
 *
 * The module holds one type, Kernel.  Kernel(numeric, on_error, tp_at) keeps the NumericModel
 * whose arrays prm and u are read at every call, a Python callable on_error(t, status, x) that
 * raises the error of a failed pivot (Cholesky or articulated-body, whichever mbs_rhs uses),
 * and tp_at(t) (None when the generated mbs_time_parameters evaluates the time parameters in C,
 * or the model has none).
 *
 * kernel(t, x) -> x' is a vectorcall: no argument tuple, no Python frame.  x and the model's
 * prm and u are used in place when they are C-contiguous float64 arrays of the right size,
 * otherwise converted (so lists work too); x' is a new float64 array of length 2 MBS_NY. */
#include <stddef.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    PyObject *dict;          /* attributes set from Python (path, source, numeric, f) */
    vectorcallfunc vectorcall;
    PyObject *numeric;
    PyObject *numeric_dict;  /* numeric.__dict__: prm and u are looked up there first */
    PyObject *on_error;
    PyObject *tp_at;         /* NULL: time parameters from C (or none) */
} Kernel;

static PyObject *str_prm, *str_u;

/* A C-contiguous float64 vector of n entries viewing or converting obj (new reference), or
 * NULL with ValueError naming `what`. */
static PyArrayObject *as_vector(PyObject *obj, npy_intp n, const char *what)
{
    PyArrayObject *a;
    if (PyArray_CheckExact(obj)) {
        a = (PyArrayObject *)obj;
        if (PyArray_TYPE(a) == NPY_DOUBLE && PyArray_IS_C_CONTIGUOUS(a) && PyArray_NDIM(a) == 1
            && PyArray_DIM(a, 0) == n) {
            Py_INCREF(obj);
            return a;
        }
    }
    a = (PyArrayObject *)PyArray_FROMANY(obj, NPY_DOUBLE, 0, 0, NPY_ARRAY_CARRAY_RO);
    if (a == NULL) return NULL;
    if (PyArray_SIZE(a) != n || (n > 0 && PyArray_NDIM(a) != 1)) {
        PyErr_Format(PyExc_ValueError, "%s must be a vector of %zd numbers, got shape of size %zd",
                     what, (Py_ssize_t)n, (Py_ssize_t)PyArray_SIZE(a));
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* The model's array `name` (prm or u) as a float64 vector of n entries (new reference).
 * A plain instance attribute is read from the instance dict directly (a dict lookup instead of
 * the generic attribute protocol); anything else goes through getattr. */
static PyArrayObject *model_vector(Kernel *k, PyObject *name, npy_intp n, const char *what)
{
    PyArrayObject *a;
    PyObject *obj = k->numeric_dict ? PyDict_GetItemWithError(k->numeric_dict, name) : NULL;
    if (obj != NULL) return as_vector(obj, n, what);
    if (PyErr_Occurred()) return NULL;
    obj = PyObject_GetAttr(k->numeric, name);
    if (obj == NULL) return NULL;
    a = as_vector(obj, n, what);
    Py_DECREF(obj);
    return a;
}

static PyObject *kernel_call(PyObject *self, PyObject *const *args, size_t nargsf,
                             PyObject *kwnames)
{
    Kernel *k = (Kernel *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyArrayObject *x = NULL, *prm = NULL, *u = NULL, *tpa = NULL, *out = NULL;
    double tp_c[MBS_NTP > 0 ? MBS_NTP : 1];
    const double *tp = tp_c;
    npy_intp nx = 2 * MBS_NY;
    double t;
    int status;

    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_SetString(PyExc_TypeError, "rhs(t, x) takes no keyword arguments");
        return NULL;
    }
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "rhs(t, x) takes exactly two positional arguments (%zd given)",
                     nargs);
        return NULL;
    }
    t = PyFloat_AsDouble(args[0]);
    if (t == -1.0 && PyErr_Occurred()) return NULL;
    x = as_vector(args[1], nx, "the state x = [y, y']");
    if (x == NULL) return NULL;
    prm = model_vector(k, str_prm, MBS_NPRM, "the parameter values (numeric.prm)");
    if (prm == NULL) goto fail;
    u = model_vector(k, str_u, MBS_NU, "the input values (numeric.u)");
    if (u == NULL) goto fail;
    tp_c[0] = 0.0;
    if (k->tp_at != NULL) {
        PyObject *tpo = PyObject_CallOneArg(k->tp_at, args[0]);
        if (tpo == NULL) goto fail;
        tpa = as_vector(tpo, MBS_NTP, "the time parameters");
        Py_DECREF(tpo);
        if (tpa == NULL) goto fail;
        tp = (const double *)PyArray_DATA(tpa);
    } else {
#if MBS_NTP > 0 && MBS_TP_FUNCTION
        mbs_time_parameters(t, (const double *)PyArray_DATA(prm), tp_c);
#endif
    }
    out = (PyArrayObject *)PyArray_SimpleNew(1, &nx, NPY_DOUBLE);
    if (out == NULL) goto fail;
    status = mbs_rhs(t, (const double *)PyArray_DATA(x), (const double *)PyArray_DATA(prm),
                     (const double *)PyArray_DATA(u), tp, (double *)PyArray_DATA(out));
    if (status != 0) {
        PyObject *r = PyObject_CallFunction(k->on_error, "diO", t, status, (PyObject *)x);
        Py_XDECREF(r);
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_RuntimeError, "mbs_rhs failed with status %d", status);
        Py_CLEAR(out);
    }
    Py_DECREF(x);
    Py_DECREF(prm);
    Py_DECREF(u);
    Py_XDECREF(tpa);
    return (PyObject *)out;
fail:
    Py_XDECREF(x);
    Py_XDECREF(prm);
    Py_XDECREF(u);
    Py_XDECREF(tpa);
    return NULL;
}

static int kernel_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    Kernel *k = (Kernel *)self;
    PyObject *numeric, *on_error, *tp_at;
    static char *kwlist[] = {"numeric", "on_error", "tp_at", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO", kwlist, &numeric, &on_error, &tp_at))
        return -1;
    if (!PyCallable_Check(on_error) || (tp_at != Py_None && !PyCallable_Check(tp_at))) {
        PyErr_SetString(PyExc_TypeError, "on_error and tp_at must be callable (tp_at may be None)");
        return -1;
    }
    Py_INCREF(numeric);
    Py_XSETREF(k->numeric, numeric);
    /* the instance dict, unless the type defines prm or u itself (a property would win over
     * the dict in getattr, so it must not be bypassed) */
    Py_CLEAR(k->numeric_dict);
    if (_PyType_Lookup(Py_TYPE(numeric), str_prm) == NULL
        && _PyType_Lookup(Py_TYPE(numeric), str_u) == NULL) {
        PyObject **dictptr = _PyObject_GetDictPtr(numeric);
        if (dictptr != NULL && *dictptr != NULL && PyDict_CheckExact(*dictptr)) {
            Py_INCREF(*dictptr);
            k->numeric_dict = *dictptr;
        }
    }
    Py_INCREF(on_error);
    Py_XSETREF(k->on_error, on_error);
    if (tp_at == Py_None) {
        Py_CLEAR(k->tp_at);
    } else {
        Py_INCREF(tp_at);
        Py_XSETREF(k->tp_at, tp_at);
    }
    k->vectorcall = kernel_call;
    return 0;
}

static int kernel_traverse(PyObject *self, visitproc visit, void *arg)
{
    Kernel *k = (Kernel *)self;
    Py_VISIT(k->dict);
    Py_VISIT(k->numeric);
    Py_VISIT(k->numeric_dict);
    Py_VISIT(k->on_error);
    Py_VISIT(k->tp_at);
    return 0;
}

static int kernel_clear(PyObject *self)
{
    Kernel *k = (Kernel *)self;
    Py_CLEAR(k->dict);
    Py_CLEAR(k->numeric);
    Py_CLEAR(k->numeric_dict);
    Py_CLEAR(k->on_error);
    Py_CLEAR(k->tp_at);
    return 0;
}

static void kernel_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    kernel_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *kernel_tp_call(PyObject *self, PyObject *args, PyObject *kwds)
{
    if (kwds != NULL && PyDict_GET_SIZE(kwds) > 0) {
        PyErr_SetString(PyExc_TypeError, "rhs(t, x) takes no keyword arguments");
        return NULL;
    }
    return kernel_call(self, &PyTuple_GET_ITEM(args, 0), (size_t)PyTuple_GET_SIZE(args), NULL);
}

static PyTypeObject KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "@MODULE@.Kernel",
    .tp_doc = "rhs(t, x) -> x' = [y', y''] of the compiled model (mbsfmu.codegen.c_rhs)",
    .tp_basicsize = sizeof(Kernel),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = PyType_GenericNew,
    .tp_init = kernel_init,
    .tp_dealloc = kernel_dealloc,
    .tp_traverse = kernel_traverse,
    .tp_clear = kernel_clear,
    .tp_call = kernel_tp_call,
    .tp_vectorcall_offset = offsetof(Kernel, vectorcall),
    .tp_dictoffset = offsetof(Kernel, dict),
};

static struct PyModuleDef kernel_module = {
    PyModuleDef_HEAD_INIT, .m_name = "@MODULE@", .m_doc = NULL, .m_size = -1,
};

PyMODINIT_FUNC PyInit_@MODULE@(void)
{
    PyObject *m;
    import_array();
    if (PyType_Ready(&KernelType) < 0) return NULL;
    str_prm = PyUnicode_InternFromString("prm");
    str_u = PyUnicode_InternFromString("u");
    if (str_prm == NULL || str_u == NULL) return NULL;
    m = PyModule_Create(&kernel_module);
    if (m == NULL) return NULL;
    Py_INCREF(&KernelType);
    if (PyModule_AddObject(m, "Kernel", (PyObject *)&KernelType) < 0) {
        Py_DECREF(&KernelType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
