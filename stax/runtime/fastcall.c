/* Stax's compiled per-call entry point (issue 9 item 4): one C call runs a kernel region on
 * NumPy arrays. `run(fn, arrays, flags)` reads each array's data pointer (PyArray_DATA: no
 * ctypes objects), releases the GIL, calls `fn(data..., flags)` and takes the GIL back.
 * Built on first use by stax.runtime.fast into the verified kernel cache; without it the
 * wrapper calls through ctypes. */
#define PY_SSIZE_T_CLEAN
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <Python.h>
#include <numpy/arrayobject.h>
#include <stdint.h>

/* regions take up to MAX_ARGS pointers and the flag buffer, each case calling through the
 * matching function type; the wrapper calls regions with more arguments through ctypes */
#define MAX_ARGS 16
typedef void* P;

static void call_region(void* fn, int n, P* p, int32_t* flags) {
    switch (n) {
        case 0: ((void (*)(int32_t*))fn)(flags); break;
        case 1: ((void (*)(P, int32_t*))fn)(p[0], flags); break;
        case 2: ((void (*)(P, P, int32_t*))fn)(p[0], p[1], flags); break;
        case 3: ((void (*)(P, P, P, int32_t*))fn)(p[0], p[1], p[2], flags); break;
        case 4: ((void (*)(P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], flags); break;
        case 5: ((void (*)(P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], flags); break;
        case 6: ((void (*)(P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], flags); break;
        case 7: ((void (*)(P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], flags); break;
        case 8: ((void (*)(P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], flags); break;
        case 9: ((void (*)(P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], flags); break;
        case 10: ((void (*)(P, P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], flags); break;
        case 11: ((void (*)(P, P, P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], flags); break;
        case 12: ((void (*)(P, P, P, P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], flags); break;
        case 13: ((void (*)(P, P, P, P, P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], flags); break;
        case 14: ((void (*)(P, P, P, P, P, P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13], flags); break;
        case 15: ((void (*)(P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14], flags); break;
        case 16: ((void (*)(P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15], flags); break;
    }
}

static PyObject* run(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "run(fn: int, arrays: tuple, flags: int)");
        return NULL;
    }
    void* fn = PyLong_AsVoidPtr(args[0]);
    int32_t* flags = (int32_t*)PyLong_AsVoidPtr(args[2]);
    if (PyErr_Occurred()) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(args[1]);
    if (n > MAX_ARGS) {
        PyErr_SetString(PyExc_ValueError, "stax: too many kernel arguments for the fast call");
        return NULL;
    }
    P p[MAX_ARGS];
    for (Py_ssize_t k = 0; k < n; k += 1) {
        PyObject* a = PyTuple_GET_ITEM(args[1], k);
        if (!PyArray_Check(a)) {
            PyErr_Format(PyExc_TypeError, "stax: kernel argument %zd is not an ndarray", k);
            return NULL;
        }
        p[k] = PyArray_DATA((PyArrayObject*)a);
    }
    Py_BEGIN_ALLOW_THREADS
    call_region(fn, (int)n, p, flags);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL, "run(fn, arrays, flags)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "stax_fastcall", NULL, -1, methods};

PyMODINIT_FUNC PyInit_stax_fastcall(void) {
    import_array();
    return PyModule_Create(&module);
}
